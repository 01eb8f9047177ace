#if canImport(Glibc)
import Glibc
#endif

/// The terminal settings found at start, restored from `atexit` and from signal handlers, which cannot capture.
// nonisolated(unsafe): written once by `Terminal.enterFullScreen` before any handler that reads it is installed;
// afterwards only read (by `restore`, whose flag check makes a second run a no-op).
nonisolated(unsafe) private var savedAttributes = termios()
// nonisolated(unsafe): a flag set before the handlers are installed and cleared by `restore`; a racing second
// restore only repeats idempotent writes.
nonisolated(unsafe) private var fullScreenActive = false

/// Raw mode, the alternate screen and their undoing, so the user's shell comes back intact however the client ends
/// (quit, SIGTERM, SIGHUP, or a crash).
enum Terminal {
    private static let enter = Array("\u{1B}[?1049h\u{1B}[H\u{1B}[2J".utf8)
    private static let leave = Array("\u{1B}[0m\u{1B}[?25h\u{1B}[?1049l".utf8)

    /// Switches to raw input and the alternate screen; false when stdin is not a terminal.
    static func enterFullScreen() -> Bool {
        guard tcgetattr(0, &savedAttributes) == 0 else { return false }
        var raw = savedAttributes
        raw.c_lflag &= ~tcflag_t(ECHO | ICANON | ISIG | IEXTEN)
        raw.c_iflag &= ~tcflag_t(IXON | ICRNL | BRKINT | INPCK | ISTRIP)
        withUnsafeMutableBytes(of: &raw.c_cc) { bytes in
            bytes[Int(VMIN)] = 1
            bytes[Int(VTIME)] = 0
        }
        guard tcsetattr(0, TCSAFLUSH, &raw) == 0 else { return false }
        fullScreenActive = true
        write(enter)
        atexit { Terminal.restore() }
        for number in [SIGTERM, SIGHUP, SIGINT, SIGQUIT, SIGSEGV, SIGBUS, SIGILL, SIGTRAP, SIGABRT, SIGFPE] {
            signal(number) { number in
                Terminal.restore()
                signal(number, SIG_DFL)
                raise(number)
            }
        }
        return true
    }

    /// Puts the terminal back as it was; safe to call more than once and from a signal handler (only `tcsetattr`
    /// and `write`, both async-signal-safe).
    static func restore() {
        guard fullScreenActive else { return }
        fullScreenActive = false
        tcsetattr(0, TCSAFLUSH, &savedAttributes)
        write(leave)
    }

    /// Rows and columns, 24x80 when the terminal does not say.
    static func size() -> (rows: Int, columns: Int) {
        var size = winsize()
        guard ioctl(1, UInt(TIOCGWINSZ), &size) == 0, size.ws_row > 0, size.ws_col > 0 else { return (24, 80) }
        return (Int(size.ws_row), Int(size.ws_col))
    }

    /// Writes all of `bytes` to stdout, retrying short writes.
    static func write(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = Glibc.write(1, buffer.baseAddress! + offset, buffer.count - offset)
                if written <= 0 {
                    if written < 0, errno == EINTR { continue }
                    return
                }
                offset += written
            }
        }
    }
}
