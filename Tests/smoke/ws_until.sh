# Shared by the smoke tests that talk to a server with websocat: `ws_until PATTERN URL [MESSAGE...]` connects to URL,
# sends each MESSAGE, and keeps the connection open until a line the server sent matches the extended regex PATTERN
# (or 30 s have passed, or the connection ended); then it closes and prints every line the server sent.
ws_until() {
    local pattern=$1 url=$2 out fifo pid
    shift 2
    out=$(mktemp)
    fifo=$(mktemp -u)
    mkfifo "$fifo"
    timeout 40 websocat "$url" <"$fifo" >"$out" 2>/dev/null &
    pid=$!
    # A subshell: a write after websocat has gone ends it, not the caller.
    (
        [ "$#" -eq 0 ] || printf '%s\n' "$@"
        # websocat's stdin stays open, so the connection too, until the answer came.
        for _ in $(seq 300); do
            grep -qE -- "$pattern" "$out" && break
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
    ) >"$fifo"
    wait "$pid" || true
    cat "$out"
    rm -f "$out" "$fifo"
}
