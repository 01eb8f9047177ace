# Shared by the tmux smoke tests: `wait_for SESSION PATTERN DESCRIPTION` polls a tmux pane (through the caller's
# `tmx`) for up to 30 s and counts what passed and failed.
passed=0
failed=0
wait_for() {
    local screen=""
    for _ in $(seq 300); do
        screen=$(tmx capture-pane -p -t "$1" 2>/dev/null || true)
        if grep -qE -- "$2" <<<"$screen"; then
            echo "ok: $3"
            passed=$((passed + 1))
            return 0
        fi
        sleep 0.1
    done
    echo "FAILED: $3 (no /$2/ on $1's screen within 30 s):"
    echo "$screen"
    failed=$((failed + 1))
    return 1
}
