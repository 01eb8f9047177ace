# Shared by the smoke tests' cleanups: `remove_soon PATH...` removes what a process just told to stop may still be
# writing (a server draining, a client saving its kept state), trying again for up to 10 s; what is left then stays.
remove_soon() {
    for _ in $(seq 100); do
        rm -rf "$@" 2>/dev/null && return 0
        sleep 0.1
    done
    echo "note: could not remove $*" >&2
}
