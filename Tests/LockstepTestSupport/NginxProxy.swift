import Foundation
import Glibc

/// A throwaway nginx in front of several servers, as docs/deploy.md configures it: WebSocket upgrades passed through,
/// and a handshake refused with 503 (a draining server) or a refused connection (a stopped one) tried on the next
/// server. Its files live in a temporary directory; call ``stop()`` in a `defer`.
public final class NginxProxy: Sendable {
    /// The port it listens on, on 127.0.0.1.
    public let port: Int
    private let directory: String
    private let process: ChildProcess

    /// Starts nginx on a free port in front of `upstreams` (ports on 127.0.0.1); returns once it accepts connections.
    public init(upstreams: [Int]) throws(NginxProxyError) {
        guard let nginx = ["/usr/sbin/nginx", "/usr/bin/nginx"].first(where: FileManager.default.isExecutableFile)
        else { throw .notInstalled }
        directory = NSTemporaryDirectory() + "lockstep-nginx-\(UUID().uuidString)"
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            port = try PostgresServer.freePort()
            let servers = upstreams.map { "        server 127.0.0.1:\($0) max_fails=1 fail_timeout=2s;" }
            let configuration = """
                pid \(directory)/nginx.pid;
                error_log \(directory)/error.log;
                daemon off;
                events { worker_connections 1024; }
                http {
                    access_log off;
                    client_body_temp_path \(directory)/body;
                    proxy_temp_path \(directory)/proxy;
                    fastcgi_temp_path \(directory)/fastcgi;
                    uwsgi_temp_path \(directory)/uwsgi;
                    scgi_temp_path \(directory)/scgi;
                    upstream lockstep {
                \(servers.joined(separator: "\n"))
                    }
                    map $http_upgrade $connection_upgrade { default upgrade; '' close; }
                    server {
                        listen 127.0.0.1:\(port);
                        location / {
                            proxy_pass http://lockstep;
                            proxy_http_version 1.1;
                            proxy_set_header Upgrade $http_upgrade;
                            proxy_set_header Connection $connection_upgrade;
                            proxy_set_header Host $host;
                            proxy_read_timeout 1h;
                            proxy_next_upstream error timeout http_503;
                        }
                    }
                }
                """
            try configuration.write(toFile: directory + "/nginx.conf", atomically: true, encoding: .utf8)
            process = try ChildProcess(executable: nginx, arguments: ["-p", directory, "-c", directory + "/nginx.conf"])
        } catch {
            try? FileManager.default.removeItem(atPath: directory)
            throw .failed("\(error)")
        }
        for _ in 0..<100 where !accepts() { usleep(50_000) }
        guard accepts() else {
            stop()
            throw .failed("nginx did not listen on \(port)")
        }
    }

    /// Stops nginx and deletes its files.
    public func stop() {
        process.send(SIGTERM)
        process.waitForExit()
        try? FileManager.default.removeItem(atPath: directory)
    }

    private func accepts() -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }
}

public enum NginxProxyError: Error, CustomStringConvertible {
    case notInstalled
    case failed(String)

    public var description: String {
        switch self {
        case .notInstalled: "nginx is not installed (make test installs it)"
        case .failed(let reason): "nginx did not start: \(reason)"
        }
    }
}
