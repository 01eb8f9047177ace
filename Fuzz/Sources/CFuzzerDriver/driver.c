// SwiftPM links executables on Linux with main defined as <module>_main, which a -parse-as-library
// fuzz target does not have, and that also keeps libFuzzer's own main out of the link. This supplies
// it: libFuzzer's driver, calling the Swift target's LLVMFuzzerTestOneInput.
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LockstepFuzz_main(int argc, char **argv) {
    return LLVMFuzzerRunDriver(&argc, &argv, LLVMFuzzerTestOneInput);
}
