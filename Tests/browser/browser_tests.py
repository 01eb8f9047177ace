"""The JavaScript client and the inspector in a real browser: headless Chromium, driven with selenium, against real
servers.

A test page on its own origin imports /lockstep.js from the server (CORS), runs the RFC 6902 community tests, then
converges with two Swift clients (lockstep-client) under random actions, survives a server restart by resuming, moves
to its next address at once when its server drains (close 1001), and two page clients undo their own changes. A page
that keeps its room in localStorage sends actions while the server is down, is reloaded, and each is applied once
when the server comes back. Over PostgreSQL, a request whose write the database refuses is sent again, not rejected.
The inspector names who made each change and when, from the causes.
The inspector shows a room, follows changes made with websocat, and its undo, revert and time slider act on the room.
With private parts, each token's inspector shows the room as that token may see it; a client of a path follows part
of a room. The inspector shows each peer's presence state and the room's pending timers, counting down, and cancels
one.
Run from the project root after `swift build`; prints one line per check and "N passed, M failed". With
LOCKSTEP_SCREENSHOTS=DIR it saves the inspector's screenshots there (`make screenshots`: docs/images).
"""

import glob
import http.server
import json
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.common.exceptions import StaleElementReferenceException

BUILD = os.environ.get("LOCKSTEP_BUILD", ".build/debug")
RESULTS = {"passed": 0, "failed": 0}


def check(name, condition, detail=""):
    RESULTS["passed" if condition else "failed"] += 1
    print(f"{'ok  ' if condition else 'FAIL'} {name}" + (f": {detail}" if detail and not condition else ""))


def click(driver, by, value, attempts=40):
    """Finds and clicks an element, finding it again when the page redrew it in between (the timeline redraws on
    every patch)."""
    for _ in range(attempts):
        try:
            driver.find_element(by, value).click()
            return
        except StaleElementReferenceException:
            time.sleep(0.05)
    driver.find_element(by, value).click()


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Server:
    """`lockstep serve` on a fixed port, so a restart comes back where the page's client reconnects."""

    def __init__(self, port, data, app="counter", arguments=()):
        self.arguments = [
            f"{BUILD}/lockstep", "serve", "--port", str(port), *(["--data", data] if data else []), "--app", app,
            "--rate-limit", "0", *arguments,
        ]
        self.port = port
        self.start()

    def start(self):
        self.process = subprocess.Popen(self.arguments, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        line = self.process.stdout.readline().decode()
        if "/rooms/ROOM" not in line:
            raise RuntimeError(f"the server did not start: {line}")

    def stop(self):
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(timeout=20)

    def room(self, name):
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/rooms/{name}", timeout=10) as response:
            return json.load(response)


class Postgres:
    """A throwaway PostgreSQL: a temporary directory, a free loopback port, run as the `postgres` user."""

    def __init__(self):
        self.bin = os.path.dirname(sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))[-1])
        self.directory = tempfile.mkdtemp(prefix="lockstep-browser-pg-")
        if os.getuid() == 0:
            shutil.chown(self.directory, "postgres")
        self.port = free_port()
        data = f"{self.directory}/data"
        self.run(f"{self.bin}/initdb", "-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8")
        options = f"-p {self.port} -k {self.directory} -c listen_addresses=127.0.0.1 -c fsync=off"
        self.run(f"{self.bin}/pg_ctl", "-D", data, "-l", f"{self.directory}/log", "-w", "-o", options, "start")
        self.sql("CREATE DATABASE lockstep", database="postgres")
        self.url = f"postgres://postgres@127.0.0.1:{self.port}/lockstep"

    def run(self, *command, check=True):
        prefix = ["runuser", "-u", "postgres", "--"] if os.getuid() == 0 else []
        subprocess.run([*prefix, *command], check=check, capture_output=True)

    def sql(self, statements, database="lockstep"):
        return subprocess.run(
            [f"{self.bin}/psql", "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", "-d", database, "-XAtq",
             "-v", "ON_ERROR_STOP=1", "-c", statements],
            check=True, capture_output=True, text=True).stdout.strip()

    def stop(self):
        self.run(f"{self.bin}/pg_ctl", "-D", f"{self.directory}/data", "-m", "immediate", "-w", "stop", check=False)
        shutil.rmtree(self.directory, ignore_errors=True)


def serve_page(directory):
    """The test page's own origin: a static file server on another port."""
    handler = lambda *args: http.server.SimpleHTTPRequestHandler(*args, directory=directory)
    http.server.SimpleHTTPRequestHandler.log_message = lambda *args: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def browser():
    options = Options()
    for argument in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"]:
        options.add_argument(argument)
    options.binary_location = "/usr/bin/chromium"
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    driver.set_script_timeout(60)
    return driver


def run_page(driver, script, *arguments):
    """Runs an async function body in the page; its return value comes back, a thrown error fails the check."""
    wrapped = (
        "const done = arguments[arguments.length - 1];"
        f"(async (...args) => {{ {script} }})(...Array.from(arguments).slice(0, -1))"
        ".then((value) => done({value}), (error) => done({error: String(error && error.stack || error)}));"
    )
    result = driver.execute_async_script(wrapped, *arguments)
    if "error" in result:
        raise RuntimeError(result["error"])
    return result.get("value")


def rfc6902_tests(driver):
    records = []
    for name in ["tests.json", "spec_tests.json"]:
        with open(f"Tests/LockstepJSONTests/Resources/{name}") as file:
            records += [record for record in json.load(file) if "patch" in record and not record.get("disabled")]
    failures = run_page(driver, """
        const [records] = args;
        const failures = [];
        for (const record of records) {
            const before = JSON.stringify(record.doc);
            let result, error;
            try { result = lockstep.applyPatch(record.doc, record.patch); } catch (caught) { error = caught; }
            if (JSON.stringify(record.doc) !== before) failures.push(`${record.comment}: the document was changed`);
            if ("error" in record) {
                if (!error) failures.push(`${record.comment || record.error}: no error`);
            } else if (error) {
                failures.push(`${record.comment}: ${error}`);
            } else if ("expected" in record && !lockstep.deepEqual(result, record.expected)) {
                failures.push(`${record.comment}: ${JSON.stringify(result)}`);
            }
        }
        return failures;
    """, records)
    check(f"the RFC 6902 community tests pass in the browser ({len(records)} records)", failures == [], failures[:5])


def swift_client(port, room, commands):
    return subprocess.Popen(
        [f"{BUILD}/lockstep-client", f"ws://127.0.0.1:{port}/rooms/{room}", "--exec=" + "; ".join(commands)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def convergence(driver, server):
    rng = random.Random(6902)
    browser_actions = [rng.choice([{"type": "increment"}, {"type": "decrement"}, {"type": "add", "amount": 3}])
                       for _ in range(150)]
    swift = [swift_client(server.port, "converge", [rng.choice(["+", "-", "add 2"]) for _ in range(100)])
             for _ in range(2)]
    versions = run_page(driver, """
        const [url, actions] = args;
        window.room = await lockstep.connectRoom(url, {name: "browser"});
        return Promise.all(actions.map((action) => room.send(action)));
    """, f"ws://127.0.0.1:{server.port}/rooms/converge", browser_actions)
    codes = [client.wait(timeout=60) for client in swift]
    errors = [client.stderr.read().decode()[-300:] for client in swift]
    check("both Swift clients ran all their commands", codes == [0, 0], errors)
    check("every browser action was acknowledged", len(versions) == 150 and all(isinstance(v, int) for v in versions))
    expected = server.room("converge")
    mirror = run_page(driver, """
        const [version] = args;
        const deadline = Date.now() + 10000;
        while (room.version < version && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
        return {version: room.version, state: room.state, peers: room.peerCount};
    """, expected["version"])
    check("the browser's mirror equals the server's state", mirror["state"] == expected["state"]
          and mirror["version"] == expected["version"], f"{mirror} vs {expected}")
    check("every change was applied once", expected["version"] == 350, expected["version"])


def restart(driver, server):
    before = server.room("converge")["state"]["count"]
    server.stop()
    # Sent while the server is down: they wait in the outbox and go out once the room has resumed.
    # The last is an undo mine: numbered like the others, it takes back the 40th increment, once.
    run_page(driver, """
        window.offline = Array.from({length: 40}, () => room.send({type: "increment"}));
        offline.push(room.undo({mine: true}));
        return room.status;
    """)
    server.start()
    result = run_page(driver, """
        const versions = await Promise.all(offline);
        const more = await Promise.all(Array.from({length: 10}, () => room.send({type: "increment"})));
        return {versions: versions.concat(more), count: room.state.count, status: room.status};
    """)
    after = server.room("converge")
    check("the browser resumed after a restart and sent everything once", after["state"]["count"] == before + 49,
          f"{before} + 49 != {after['state']['count']}")
    check("its mirror follows the restarted server", result["count"] <= after["state"]["count"] and
          result["status"] == "open", result)


def going_away(driver, server, page_origin):
    """A server that drains closes with 1001: the page's client moves to the next address at once, not after its
    five-second backoff."""
    other = Server(free_port(), tempfile.mkdtemp(prefix="lockstep-other-"), arguments=["--allowed-origin", page_origin])
    try:
        run_page(driver, """
            const [urls] = args;
            window.away = await lockstep.connectRoom(urls, {reconnectDelay: 5000, maxReconnectDelay: 5000});
            for (let i = 0; i < 3; i++) await away.send({type: "increment"});
        """, [f"ws://127.0.0.1:{server.port}/rooms/away", f"ws://127.0.0.1:{other.port}/rooms/away"])
        started = time.time()
        server.stop()
        result = run_page(driver, """
            const deadline = Date.now() + 4000;
            while (!(away.status === "open" && away.state.count === 0) && Date.now() < deadline) {
                await new Promise((r) => setTimeout(r, 20));
            }
            const version = await away.send({type: "increment"});
            return {status: away.status, version};
        """)
        took = time.time() - started
        check("on 1001 the browser moved to the next server at once", result == {"status": "open", "version": 1}
              and took < 2.5, f"{result} after {took:.1f} s")
        check("the drained server exited 0", server.process.returncode == 0, server.process.returncode)
    finally:
        other.stop()
        server.start()


def undo_mine(driver, server):
    """Two page clients: alice's undo mine takes back her own change after bob's, and every cause says who and when.
    Then the inspector, opened once both have left, names them and shows the times from the causes."""
    started = int(time.time() * 1000)
    result = run_page(driver, """
        const [url] = args;
        const alice = await lockstep.connectRoom(url, {name: "alice"});
        const bob = await lockstep.connectRoom(url, {name: "bob"});
        const causes = [];
        bob.subscribe((room, message) => { if (message.type === "patch") causes.push(message.cause); });
        await alice.send({type: "increment"});
        await bob.send({type: "add", amount: 10});
        const undone = await alice.undo({mine: true});
        const afterUndo = alice.state.count;
        const redone = await alice.redo({mine: true});
        let refused = null;
        try { await bob.redo({mine: true}); } catch (error) { refused = error.code; }
        const global = await bob.undo();
        const deadline = Date.now() + 10000;
        while (bob.version < global && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
        const result = {undone, afterUndo, redone, global, count: bob.state.count, refused, causes};
        alice.close();
        bob.close();
        return result;
    """, f"ws://127.0.0.1:{server.port}/rooms/mine")
    causes = result["causes"]
    check("undo mine takes back only the sender's own change", result["afterUndo"] == 10 and result["undone"] == 3,
          result)
    check("redo mine re-applies it, and a client with nothing of its own to redo is refused",
          result["redone"] == 4 and result["refused"] == "nothing_to_redo", result)
    check("global undo still takes back the room's latest change", result["global"] == 5 and result["count"] == 10,
          result)
    check("the patches of undo mine and redo mine say so",
          [(c["kind"], c.get("mine"), c.get("of")) for c in causes[2:4]] == [("undo", True, 1), ("redo", True, 1)],
          causes)
    now = int(time.time() * 1000)
    check("every cause carries the sender's name and the time of the change",
          [c.get("name") for c in causes] == ["alice", "bob", "alice", "alice", "bob"]
          and all(started <= c.get("at", 0) <= now for c in causes), causes)

    driver.get(f"http://127.0.0.1:{server.port}/inspect/mine")
    ready = wait_until(lambda: driver.execute_script("return document.body.dataset.ready") == "true", 20)
    timeline = driver.find_element("id", "timeline").text
    check("the inspector names who made each change after they left", ready and "alice" in timeline and
          "bob" in timeline and "undo of own v1" in timeline and "redo of own v1" in timeline, timeline)
    with urllib.request.urlopen(f"http://127.0.0.1:{server.port}/rooms/mine/log?after=0", timeout=10) as response:
        log = [json.loads(line) for line in response.read().decode().splitlines() if line]
    expected = sorted(time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(m["cause"]["at"] // 1000))
                      + f".{m['cause']['at'] % 1000:03d}Z" for m in log if m.get("type") == "patch")
    shown = sorted(driver.execute_script(
        "return Array.from(document.querySelectorAll('#timeline time'), (element) => element.dateTime)"))
    check("the inspector's times are the causes' times", len(expected) == 5 and shown == expected,
          f"{shown} vs {expected}")


def presence_state(driver, server):
    """Presence state (1.3): a burst of alice's setPresence reaches bob throttled, ending on the last state; clearing
    it and a reconnection (the client sets it again) show in bob's peers."""
    result = run_page(driver, """
        const [url] = args;
        const lockstep = await import(url.replace(/^ws/, "http").replace(/\/rooms\/.*$/, "/lockstep.js"));
        const until = async (condition) => {
            const deadline = Date.now() + 10000;
            while (!condition() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
            return condition();
        };
        const alice = await lockstep.connectRoom(url, {name: "alice"});
        const bob = await lockstep.connectRoom(url, {name: "bob"});
        const aliceOf = (room) => room.peers.find((peer) => peer.name === "alice");
        await until(() => bob.peers.length === 2);
        let changed = 0;
        bob.subscribe((room, message) => { if (message.type === "presence" && message.changed) changed += 1; });
        const started = Date.now();
        for (let index = 1; index <= 1000; index += 1) alice.setPresence({cursor: index});
        const last = await until(() => aliceOf(bob)?.state?.cursor === 1000);
        const elapsed = Date.now() - started;
        alice.setPresence(null);
        const cleared = await until(() => aliceOf(bob) !== undefined && !("state" in aliceOf(bob)));
        alice.setPresence({typing: true});
        await until(() => aliceOf(bob)?.state?.typing === true);
        const before = aliceOf(bob).client;
        alice.socket.close(4000);
        const back = await until(() => bob.peers.length === 2 && aliceOf(bob)?.client !== before
            && aliceOf(bob)?.state?.typing === true);
        const result = {last, elapsed, changed, cleared, back, version: bob.version};
        alice.close();
        bob.close();
        return result;
    """, f"ws://127.0.0.1:{server.port}/rooms/presence")
    # Throttled: about one message per 50 ms interval, not one per state; a loaded machine may deliver a few of them
    # bunched together, hence twice the rate and some slack.
    check("a burst of setPresence reaches another page, throttled, ending on the last state",
          result["last"] and result["changed"] <= result["elapsed"] // 25 + 5, result)
    check("a cleared state leaves the peer's entry, and a reconnected client sets its state again",
          result["cleared"] and result["back"], result)
    check("presence states change nothing in the room", result["version"] == 0, result)


def timers(driver, server):
    """Timers (1.3): a page schedules an action, replaces and cancels timers, and sees the scheduled one fire."""
    result = run_page(driver, """
        const [url] = args;
        const lockstep = await import(url.replace(/^ws/, "http").replace(/\/rooms\/.*$/, "/lockstep.js"));
        const room = await lockstep.connectRoom(url, {name: "alice"});
        const fired = new Promise((resolve) => room.subscribe((_, message) => {
            if (message.type === "patch" && message.cause.kind === "timer") resolve(message.cause);
        }));
        const scheduled = await room.schedule({type: "increment"}, {after: 200, timer: "soon"});
        const other = await room.schedule({type: "increment"}, {after: 60000, timer: "later"});
        const cancelled = await room.cancel("later");
        const cause = await fired;
        const result = {scheduled, other, cancelled, cause, state: room.state};
        room.close();
        return result;
    """, f"ws://127.0.0.1:{server.port}/rooms/timers")
    check("schedule resolves with the timer's name and due time",
          result["scheduled"]["timer"] == "soon" and result["scheduled"]["due"] > 0, result)
    check("cancel resolves with no due time", result["cancelled"] == {"timer": "later", "due": None}, result)
    check("the scheduled action fires as the page's change (cause.kind timer)",
          result["cause"]["timer"] == "soon" and result["cause"]["name"] == "alice" and result["state"] == {"count": 1},
          result)


class Watcher:
    """A second client of the room, on a plain socket: it sees what the inspector's buttons do to the room."""

    def __init__(self, port, room):
        self.socket = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.socket.sendall((
            f"GET /rooms/{room}?name=watcher HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
            "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
        ).encode())
        self.buffer = b""
        while b"\r\n\r\n" not in self.buffer:
            self.buffer += self.socket.recv(65536)
        self.buffer = self.buffer.split(b"\r\n\r\n", 1)[1]

    def next(self):
        while True:
            if len(self.buffer) >= 2:
                length, offset = self.buffer[1] & 0x7F, 2
                if length == 126:
                    length, offset = int.from_bytes(self.buffer[2:4], "big"), 4
                elif length == 127:
                    length, offset = int.from_bytes(self.buffer[2:10], "big"), 10
                if len(self.buffer) >= offset + length:
                    payload = self.buffer[offset:offset + length]
                    self.buffer = self.buffer[offset + length:]
                    return json.loads(payload)
            self.buffer += self.socket.recv(65536)

    def next_patch(self):
        while (message := self.next())["type"] != "patch":
            pass
        return message


def unavailable_sent_again(driver, page_origin):
    """A request answered `unavailable` (PostgreSQL refuses its write) is not rejected: the page's client sends it
    again with its `seq` until it is stored, once. As a new request it could be applied twice."""
    postgres = Postgres()
    server = None
    try:
        server = Server(free_port(), None, arguments=["--postgres", postgres.url, "--allowed-origin", page_origin])
        # Back on the test page's origin, the one the server allows (an earlier test opened an inspector).
        driver.get(f"{page_origin}/index.html")
        wait_until(lambda: driver.title == "ready", 20)
        postgres.sql("""
            CREATE SEQUENCE refusals;
            CREATE FUNCTION trap() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                IF convert_from(NEW.message, 'UTF8') LIKE '%"amount":777%' THEN
                    PERFORM nextval('refusals'); RAISE EXCEPTION 'trapped';
                END IF;
                RETURN NEW;
            END $$;
            CREATE TRIGGER trap AFTER INSERT ON changes FOR EACH ROW EXECUTE FUNCTION trap();""")
        run_page(driver, """
            const [url] = args;
            const lockstep = await import(url.replace(/^ws/, "http").replace(/\/rooms\/.*$/, "/lockstep.js"));
            const room = await lockstep.connectRoom(url, {reconnectDelay: 100, maxReconnectDelay: 500});
            window.refused = {room, errors: 0};
            room.subscribe((_, message) => {
                if (message && message.type === "error" && message.code === "unavailable") window.refused.errors += 1;
            });
            window.refused.send = room.send({type: "add", amount: 777});
        """, f"ws://127.0.0.1:{server.port}/rooms/refused")
        check("the database refuses the write",
              wait_until(lambda: postgres.sql("SELECT is_called FROM refusals") == "t", 30))
        waiting = run_page(driver, """
            for (let tries = 0; window.refused.errors === 0 && tries < 300; tries++) {
                await new Promise((resolve) => setTimeout(resolve, 100));
            }
            return {errors: window.refused.errors, pending: window.refused.room.pendingCount};
        """)
        check("the page hears `unavailable` and keeps the request", waiting["errors"] >= 1 and waiting["pending"] == 1,
              waiting)
        postgres.sql("DROP TRIGGER trap ON changes")
        done = run_page(driver, """
            const version = await window.refused.send;
            const result = {version, state: window.refused.room.state, pending: window.refused.room.pendingCount};
            window.refused.room.close();
            return result;
        """)
        stored = server.room("refused")
        check("once the database stores it, the send resolves and the room has the action once",
              done["state"] == {"count": 777} and done["pending"] == 0 and stored["state"] == {"count": 777}
              and stored["version"] == done["version"], {"page": done, "server": stored})
    finally:
        if server:
            server.stop()
        postgres.stop()


def kept_room(driver, page_directory, page_origin):
    """`keep: true`: actions sent with no server wait in localStorage across reloads and are applied once each."""
    with open("Sources/LockstepServer/Web/lockstep.js") as source, open(f"{page_directory}/lockstep.js", "w") as copy:
        copy.write(source.read())
    port = free_port()
    with open(f"{page_directory}/kept.html", "w") as file:
        file.write(f"""<!doctype html><meta charset="utf-8"><title>kept</title>
<script type="module">
import {{ connectRoom }} from "./lockstep.js";
window.room = await connectRoom("ws://127.0.0.1:{port}/rooms/kept", {{ keep: true, app: "counter" }});
document.title = "kept-ready";
</script>""")

    def load():
        driver.get(f"{page_origin}/kept.html")
        wait_until(lambda: driver.title == "kept-ready", 20)

    load()
    first = run_page(driver, """
        for (let i = 0; i < 6; i++) room.send({type: "increment"});
        return {pending: room.pendingCount, status: room.status, session: room.session};
    """)
    check("a kept page queues actions with no server", first["pending"] == 6 and first["status"] != "open", first)
    load()
    second = run_page(driver, """
        const kept = {pending: room.pendingCount, session: room.session};
        for (let i = 0; i < 4; i++) room.send({type: "increment"});
        return kept;
    """)
    check("after a reload the kept actions and session are back",
          second["pending"] == 6 and second["session"] == first["session"], second)
    load()
    third = run_page(driver, "return {pending: room.pendingCount};")
    check("a second reload keeps all ten", third["pending"] == 10, third)
    data = tempfile.mkdtemp(prefix="lockstep-kept-")
    server = Server(port, data, arguments=["--allowed-origin", page_origin])
    try:
        def count():
            try:
                return server.room("kept")["state"]["count"]
            except urllib.error.HTTPError:  # 404 until the page has reconnected and the room exists
                return None

        applied = wait_until(lambda: count() == 10, 20)
        drained = wait_until(lambda: run_page(driver, "return room.pendingCount;") == 0, 20)
        room = server.room("kept")
        check("the server applied each kept action once", applied and drained and room["state"]["count"] == 10
              and room["version"] == 10, room)
        load()
        after = run_page(driver, "return {pending: room.pendingCount};")
        check("a reload after that sends nothing again", after["pending"] == 0, after)
        # Once the reloaded page is open at version 10 with nothing pending, it has nothing left to send.
        resumed = wait_until(
            lambda: run_page(driver, "return room.status === 'open' && room.version === 10 && room.pendingCount === 0;"),
            20)
        check("the room still has ten changes", resumed and server.room("kept")["version"] == 10)
    finally:
        server.stop()


def wait_until(condition, seconds):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return condition()


def inspector(driver, server):
    watcher = Watcher(server.port, "demo")
    driver.set_window_size(1280, 800)
    driver.get(f"http://127.0.0.1:{server.port}/inspect/demo")
    ready = wait_until(lambda: driver.execute_script("return document.body.dataset.ready") == "true", 20)
    state = lambda: driver.find_element("id", "state").text
    timeline = lambda: driver.find_element("id", "timeline").text
    check("the inspector shows the room's snapshot", ready and "items" in state() and "nextId" in state(), state())

    websocat = subprocess.Popen(["websocat", f"ws://127.0.0.1:{server.port}/rooms/demo?name=websocat"],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    for title in ["milk", "bread"]:
        websocat.stdin.write(json.dumps({"type": "action", "id": title, "action": {"type": "add", "title": title}})
                             .encode() + b"\n")
        websocat.stdin.flush()
        while json.loads(websocat.stdout.readline()).get("id") != title:
            pass
        shown = wait_until(lambda: title in state() and title in timeline(), 1.0)
        check(f"an action sent with websocat ({title}) is in the timeline and the state within a second", shown)
    websocat.stdin.close()
    websocat.wait(timeout=10)
    check("the timeline names who made each change", "websocat" in timeline(), timeline())
    for _ in range(2):
        watcher.next_patch()

    driver.find_element("id", "undo").click()
    undo = watcher.next_patch()
    check("the undo button undoes for everyone", undo["cause"]["kind"] == "undo" and undo["version"] == 3, undo)

    # Version 2 had both items; the undo took bread away again.
    click(driver, "css selector", "button[aria-label='view the state of version 2']")
    past = lambda: driver.find_element("id", "past-state").text
    shown = wait_until(lambda: "milk" in past() and "bread" in past() and "bread" not in state(), 5)
    check("the slider and the timeline show an earlier version's state", shown, past())
    check("the slider is at that version", driver.find_element("id", "slider").get_attribute("value") == "2")
    check("the diff against the current state is listed", driver.find_element("id", "diff").text != "")
    if os.environ.get("LOCKSTEP_SCREENSHOTS"):
        directory = os.environ["LOCKSTEP_SCREENSHOTS"]
        os.makedirs(directory, exist_ok=True)
        driver.save_screenshot(f"{directory}/inspector.png")
        driver.set_window_size(420, 900)
        driver.save_screenshot(f"{directory}/inspector-narrow.png")
        driver.set_window_size(1280, 800)

    driver.find_element("id", "revert").click()
    revert = watcher.next_patch()
    check("the revert button takes the room back for everyone",
          revert["cause"]["kind"] == "revert" and revert["cause"]["to"] == 2 and revert["version"] == 4, revert)
    check("the room is at version 2's state", [item["title"] for item in server.room("demo")["state"]["items"]] ==
          ["milk", "bread"], server.room("demo"))

    driver.find_element("id", "action").clear()
    driver.find_element("id", "action").send_keys('{"type":"toggle","id":99}')
    driver.find_element("id", "send").click()
    shown = wait_until(lambda: "no todo with id 99" in driver.find_element("id", "send-error").text, 5)
    check("a refused action's error is shown inline", shown, driver.find_element("id", "send-error").text)

    post = urllib.request.Request(
        f"http://127.0.0.1:{server.port}/rooms/demo?name=billing", method="POST",
        data=json.dumps({"type": "action", "action": {"type": "add", "title": "eggs"}}).encode(),
        headers={"Content-Type": "application/json"})
    posted = json.loads(urllib.request.urlopen(post, timeout=10).read())
    watcher.next_patch()
    check("a change sent over HTTP is in the timeline with its name",
          wait_until(lambda: "billing over HTTP" in timeline() and "eggs" in state(), 5) and posted["version"] == 5,
          timeline())

    driver.get(f"http://127.0.0.1:{server.port}/")
    check("GET / lists the rooms in memory with a link to their inspector",
          driver.find_element("link text", "demo").get_attribute("href").endswith("/inspect/demo"))


def inspector_presence_and_timers(driver, server):
    """The inspector shows what each peer says it is doing (presence state) and the room's pending timers, soonest
    first, with a countdown that moves on; a fired timer leaves the list, and its Cancel button takes one away."""
    bob = subprocess.Popen(["websocat", f"ws://127.0.0.1:{server.port}/rooms/later?name=bob"],
                           stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def send(message):
        bob.stdin.write(json.dumps(message).encode() + b"\n")
        bob.stdin.flush()

    try:
        driver.get(f"http://127.0.0.1:{server.port}/inspect/later")
        ready = wait_until(lambda: driver.execute_script("return document.body.dataset.ready") == "true", 20)
        peers = lambda: driver.find_element("id", "peers").text
        timers = lambda: driver.find_element("id", "timers").text
        check("the inspector of a room with timers loads", ready and wait_until(lambda: "bob" in peers(), 10), peers())

        send({"type": "presence", "state": {"typing": True}})
        shown = wait_until(lambda: '{"typing":true}' in peers(), 10)
        check("the inspector shows a peer's presence state", shown, peers())

        send({"type": "action", "id": "t1", "action": {"type": "increment"}, "after": 120000, "timer": "turn"})
        send({"type": "action", "id": "t2", "action": {"type": "add", "amount": 2}, "after": 4000, "timer": "soon"})
        listed = wait_until(lambda: "turn" in timers() and "soon" in timers(), 10)
        check("the inspector lists the room's pending timers, soonest first, with who and what",
              listed and timers().index("soon") < timers().index("turn") and "by bob" in timers()
              and '{"type":"increment"}' in timers(), timers())
        count = lambda: driver.find_element("id", "timer-count").text
        check("the timers' heading counts them", count() == "2", count())

        left = lambda name: driver.execute_script(
            "const text = document.querySelector(`#timers li[data-timer='${arguments[0]}'] .countdown`)?.textContent;"
            "const match = /in (\\d+) min (\\d+) s|in (\\d+) s/.exec(text ?? '');"
            "return match ? (match[3] !== undefined ? Number(match[3]) : Number(match[1]) * 60 + Number(match[2])) : -1;",
            name)
        first = left("turn")
        check("a timer shows the time left until it is due", 100 <= first <= 120, first)
        check("the countdown moves on", wait_until(lambda: 0 <= left("turn") < first, 5), left("turn"))

        fired = wait_until(lambda: "soon" not in timers() and server.room("later")["state"] == {"count": 2}, 15)
        check("a timer that fired leaves the list", fired and "turn" in timers(), timers())

        click(driver, "css selector", "button[aria-label='cancel timer turn']")
        cancelled = wait_until(lambda: "turn" not in timers(), 10)
        with urllib.request.urlopen(f"http://127.0.0.1:{server.port}/rooms/later/timers", timeout=10) as response:
            pending = json.load(response)["timers"]
        check("the Cancel button takes a timer away", cancelled and pending == [] and count() == "0", pending)

        send({"type": "presence", "state": None})
        check("a cleared presence state leaves the peer's entry", wait_until(lambda: "typing" not in peers(), 10),
              peers())
    finally:
        bob.stdin.close()
        bob.wait(timeout=10)


def read_token_inspector(driver):
    """With tokens, the inspector passes `?token=` on to its WebSocket and HTTP calls; a read token hides buttons."""
    secret = "a secret of at least thirty-two bytes for the browser test"
    server = Server(free_port(), tempfile.mkdtemp(prefix="lockstep-tokens-"), app="todos",
                    arguments=["--auth-secret", secret])
    try:
        token = lambda role: subprocess.run(
            [f"{BUILD}/lockstep", "token", "--room", "demo", "--role", role, "--auth-secret", secret],
            capture_output=True, check=True).stdout.decode().strip()
        driver.get(f"http://127.0.0.1:{server.port}/inspect/demo?token={token('read')}")
        ready = wait_until(lambda: driver.execute_script("return document.body.dataset.ready") == "true", 20)
        buttons = ["undo", "redo", "revert", "send"]
        visible = [name for name in buttons if driver.find_element("id", name).is_displayed()]
        check("a read token's inspector shows the room and no button that changes it",
              ready and "nextId" in driver.find_element("id", "state").text and visible == [], visible)
        driver.get(f"http://127.0.0.1:{server.port}/inspect/demo?token={token('write')}")
        ready = wait_until(lambda: driver.execute_script("return document.body.dataset.ready") == "true", 20)
        check("a write token's inspector can send", ready and driver.find_element("id", "send").is_displayed())
    finally:
        server.stop()


def private_inspector(driver):
    """With --private, each token's inspector shows the room as that token may see it: alice's shows her hand and
    not bob's, bob's the reverse (state, timeline, an earlier version); a change bob may not see sends his inspector
    nothing, and it stays in step without resynchronising."""
    secret = "a secret of at least thirty-two bytes for the browser test"
    server = Server(free_port(), tempfile.mkdtemp(prefix="lockstep-private-"), app="json",
                    arguments=["--auth-secret", secret, "--private", "/hands/{sub}"])
    try:
        token = lambda sub: subprocess.run(
            [f"{BUILD}/lockstep", "token", "--room", "cards", "--role", "write", "--sub", sub, "--auth-secret", secret],
            capture_output=True, check=True).stdout.decode().strip()
        tokens = {"alice": token("alice"), "bob": token("bob")}
        cards = {"alice": "ACE-OF-ALICE", "bob": "KING-OF-BOB"}

        def run(who, commands):
            subprocess.run([f"{BUILD}/lockstep-client", f"ws://127.0.0.1:{server.port}/rooms/cards?token={tokens[who]}",
                            "--exec=" + "; ".join(commands)], capture_output=True, check=True, timeout=30)

        run("alice", ["set /hands {}", f'set /hands/alice {{"card":"{cards["alice"]}"}}', "set /table 1"])
        run("bob", [f'set /hands/bob {{"card":"{cards["bob"]}"}}'])
        page = lambda: driver.find_element("tag name", "main").get_attribute("textContent")
        for who, other in [("alice", "bob"), ("bob", "alice")]:
            driver.get(f"http://127.0.0.1:{server.port}/inspect/cards?token={tokens[who]}")
            ready = wait_until(lambda: driver.execute_script("return document.body.dataset.ready") == "true", 20)
            state = driver.find_element("id", "state").text
            check(f"{who}'s inspector shows {who}'s hand and says whose view it is",
                  ready and cards[who] in state and driver.find_element("id", "viewer-sub").text == who, state)
            # The change that wrote the other's hand is not in the timeline at all: v2 is alice's, v4 bob's.
            versions = re.findall(r"\bv(\d+)\b", driver.find_element("id", "timeline").text)
            hidden = "4" if who == "alice" else "2"
            check(f"{who}'s inspector has nothing of {other}'s hand (state, timeline)",
                  ready and cards[other] not in page() and hidden not in versions and "3" in versions,
                  f"{versions} {page()}")
        driver.execute_script("""
            window.snapshots = 0;
            window.inspector.room.subscribe((room, message) => { if (message.type === "snapshot") window.snapshots++; });
        """)
        run("alice", ['set /hands/alice/card "ACE-2"', "set /table 2"])
        shown = wait_until(lambda: driver.execute_script("return window.inspector.room.version") == 6, 10)
        check("a change bob may not see skips his inspector's version without a resynchronisation",
              shown and driver.execute_script("return window.snapshots") == 0
              and "table: 2" in driver.find_element("id", "state").text,
              driver.execute_script("return [window.inspector.room.version, window.snapshots]"))
        driver.execute_script("window.inspector.showVersion(3)")
        past = lambda: driver.find_element("id", "past-state").text
        shown = wait_until(lambda: "table: 1" in past(), 5)
        check("an earlier version in bob's inspector leaves alice's hand out",
              shown and "ACE" not in page() and "hands" in past(), past())
        view = run_page(driver, """
            const { connectRoom } = await import("/lockstep.js");
            const [token] = args;
            const url = location.origin.replace("http", "ws") + "/rooms/cards";
            const table = await connectRoom(url, { path: "/table", token, name: "table" });
            const start = [table.version, table.state];
            const patches = [];
            table.subscribe((room, message) => {
                if (message.type === "patch" || message.type === "snapshot") patches.push([message.version, room.state]);
            });
            const outside = await table.send({ type: "patch", ops: [{ op: "add", path: "/hands/bob/n", value: 1 }] });
            const inside = await table.send({ type: "patch", ops: [{ op: "replace", path: "/table", value: 3 }] });
            table.close();
            return { start, patches, acks: [outside, inside], path: table.path };
        """, tokens["bob"])
        check("connectRoom(url, {path}) mirrors the value there, and its versions skip changes elsewhere",
              view == {"start": [6, 2], "patches": [[8, 3]], "acks": [7, 8], "path": "/table"}, view)
    finally:
        server.stop()


def main():
    page_directory = tempfile.mkdtemp(prefix="lockstep-page-")
    data = tempfile.mkdtemp(prefix="lockstep-browser-")
    page = serve_page(page_directory)
    page_origin = f"http://127.0.0.1:{page.server_address[1]}"
    server = Server(free_port(), data, arguments=["--allowed-origin", page_origin])
    todos = Server(free_port(), tempfile.mkdtemp(prefix="lockstep-inspector-"), app="todos")
    with open(f"{page_directory}/index.html", "w") as file:
        file.write(f"""<!doctype html><meta charset="utf-8"><title>lockstep.js test</title>
<script type="module">
import * as lockstep from "http://127.0.0.1:{server.port}/lockstep.js";
window.lockstep = lockstep;
document.title = "ready";
</script>""")
    driver = None
    try:
        driver = browser()
        driver.get(f"{page_origin}/index.html")
        deadline = time.time() + 20
        while driver.title != "ready" and time.time() < deadline:
            time.sleep(0.05)
        check("a page on another origin imports /lockstep.js (CORS)", driver.title == "ready")
        rfc6902_tests(driver)
        convergence(driver, server)
        restart(driver, server)
        going_away(driver, server, page_origin)
        undo_mine(driver, server)
        presence_state(driver, server)
        timers(driver, server)
        unavailable_sent_again(driver, page_origin)
        kept_room(driver, page_directory, page_origin)
        inspector(driver, todos)
        inspector_presence_and_timers(driver, server)
        read_token_inspector(driver)
        private_inspector(driver)
    except Exception as error:  # a check that could not run is a failure, not a crash
        check("the browser tests ran to the end", False, repr(error))
    finally:
        if driver:
            driver.quit()
        server.stop()
        todos.stop()
        page.shutdown()
    print(f"browser: {RESULTS['passed']} passed, {RESULTS['failed']} failed")
    return 1 if RESULTS["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
