import Foundation

/// The cluster `scripts/pg.sh start` runs for a checkout: what a README command pasted in that checkout
/// talks to when no URL is given. Its port is 55432 unless that was taken when the cluster started (a
/// second checkout's cluster, say), so it is read from the cluster's `postmaster.pid`, found in `.pgdata`
/// of the current directory, the `pgmodel` binary's directory, or one of their parents. Its database is
/// `pgmodel`, or `$PGMODEL_LOCAL_DATABASE` (which `scripts/pg.sh start` also honours).
///
/// ```swift
/// LocalCluster.url   // "postgres://pgmodel:pgmodel@127.0.0.1:55433/pgmodel" in a checkout whose cluster took 55433
/// ```
enum LocalCluster {
    /// The scripts' default port: what a cluster gets when nothing else listens there.
    static let defaultPort = 55432

    static var url: String { "postgres://pgmodel:pgmodel@127.0.0.1:\(port ?? defaultPort)/\(database)" }

    /// `$PGMODEL_LOCAL_DATABASE` when it is a plain name, else `pgmodel`.
    static var database: String {
        let name = ProcessInfo.processInfo.environment["PGMODEL_LOCAL_DATABASE"] ?? ""
        let plain = !name.isEmpty && name.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "_" }
        return plain ? name : "pgmodel"
    }

    /// The running cluster's port, when a checkout's cluster is found and its pid file is readable.
    static var port: Int? {
        var starts = [FileManager.default.currentDirectoryPath]
        if let executable = Bundle.main.executableURL?.resolvingSymlinksInPath() {
            starts.append(executable.deletingLastPathComponent().path)
        }
        for start in starts {
            var directory = URL(fileURLWithPath: start, isDirectory: true)
            for _ in 0..<12 {
                if let port = port(inCluster: directory.appendingPathComponent(".pgdata")) { return port }
                let parent = directory.deletingLastPathComponent()
                if parent.path == directory.path { break }
                directory = parent
            }
        }
        return nil
    }

    /// Line 4 of `postmaster.pid` in `data`, if `data` is a cluster the scripts made (their marker file).
    private static func port(inCluster data: URL) -> Int? {
        guard FileManager.default.fileExists(atPath: data.appendingPathComponent("PGMODEL_CLUSTER").path),
              let pidFile = try? String(contentsOf: data.appendingPathComponent("postmaster.pid"), encoding: .utf8)
        else { return nil }
        let lines = pidFile.split(separator: "\n", omittingEmptySubsequences: false)
        guard lines.count > 3, let port = Int(lines[3].trimmingCharacters(in: .whitespaces)), (1...65_535).contains(port) else {
            return nil
        }
        return port
    }
}
