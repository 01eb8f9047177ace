import Foundation

/// `processes` N: one process coordinates N generator processes (this executable, started with the plan's
/// `workerArguments`, in `work(as: I)`), each opening the clients i with i mod N == I, so that the generator holds
/// more sockets than one process may open. The coordinator gives every worker the same start time (the monotonic
/// clock is the machine's), tells each the highest version any of them saw acked (so each waits for its clients to
/// reach it) and every acked version (so each can tell a lost delivery from one a resync snapshot covered), and adds
/// their tallies into one report.
extension LoadRun {
    func coordinateProcesses() throws(LoadError) -> LoadReport {
        guard let arguments = plan.workerArguments else {
            throw .transport("\(plan.processes) processes need the plan's workerArguments to start them")
        }
        let workers = try (0..<plan.processes).map { index throws(LoadError) in
            try LoadWorker(index: index, arguments: arguments(index))
        }
        let rssBefore = plan.serverPID.flatMap(Self.residentKiB)
        for worker in workers { _ = try worker.receive("ready") }
        let start = LoadClock.now() + 100_000_000
        for worker in workers { worker.send("start \(start)") }
        let serverCPUStart = plan.serverPID.flatMap(Self.cpuSeconds)
        var rssAfter: Int?
        if plan.scenario == .connect {
            LoadClock.sleep(until: start + plan.duration.nanoseconds)
            rssAfter = plan.serverPID.flatMap(Self.residentKiB)
        }
        var highest = 0
        for worker in workers { highest = max(highest, Int(try worker.receive("highest")) ?? 0) }
        for worker in workers { worker.send("highest \(highest)") }
        var acked: [Int] = []
        for worker in workers { acked += try worker.receive("acked", as: [Int].self) }
        let everyAcked = Self.encode(acked.sorted())
        for worker in workers { worker.send("acked " + everyAcked) }
        var tally = try workers[0].receive("tally", as: LoadTally.self)
        for worker in workers.dropFirst() { tally.add(try worker.receive("tally", as: LoadTally.self)) }
        let finish = LoadClock.now()
        let serverCPU = plan.serverPID.flatMap(Self.cpuSeconds).flatMap { end in serverCPUStart.map { end - $0 } }

        var report = makeReport(tally, start: start, finish: finish, rssBefore: rssBefore, rssAfter: rssAfter)
        report.serverCPUSeconds = serverCPU
        return report
    }

    /// A worker's line to its coordinator, on stdout.
    static func tell(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    /// The rest of the coordinator's next line on stdin, which starts with `word`.
    static func hear(_ word: String) throws(LoadError) -> String {
        guard let line = readLine(), line.hasPrefix(word) else {
            throw .transport("the coordinating process went away or said something else than \(word)")
        }
        return String(line.dropFirst(word.count).drop { $0 == " " })
    }

    static func encode(_ value: some Encodable) -> String {
        (try? JSONEncoder().encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? "null"
    }

    static func decode<Value: Decodable>(_ type: Value.Type, _ text: String) throws(LoadError) -> Value {
        do {
            return try JSONDecoder().decode(Value.self, from: Data(text.utf8))
        } catch {
            throw .transport("unreadable message from the coordinating process: \(error)")
        }
    }
}
