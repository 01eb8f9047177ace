@testable import LockstepServer
import Testing

/// Out of descriptors, the server warns at once, then at most once per interval with every refusal since.
struct DescriptorWarningsTests {
    @Test func aFloodOfRefusalsIsOneWarningPerIntervalCountingEveryRefusal() {
        var warnings = DescriptorWarnings(interval: .seconds(10))
        #expect(warnings.refused(3, at: .seconds(100)) == 3)
        #expect(warnings.refused(2, at: .seconds(101)) == nil)
        // A refusal the transport could not count is still one.
        #expect(warnings.refused(0, at: .seconds(105)) == nil)
        #expect(warnings.refused(4, at: .milliseconds(109_999)) == nil)
        #expect(warnings.refused(1, at: .seconds(110)) == 8)
        #expect(warnings.refused(1, at: .seconds(119)) == nil)
        #expect(warnings.refused(1, at: .seconds(200)) == 2)
    }
}
