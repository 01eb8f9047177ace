# Shared by the smoke tests that start a server with --port 0: `server_port LOG` waits up to 30 s for the line naming
# the server's port in LOG and prints the port; it fails if none came.
server_port() {
    local port=""
    for _ in $(seq 300); do
        port=$(grep -o 'ws://127.0.0.1:[0-9]*' "$1" | head -n 1 | sed 's/.*://' || true)
        if [ -n "$port" ]; then
            echo "$port"
            return 0
        fi
        sleep 0.1
    done
    return 1
}
