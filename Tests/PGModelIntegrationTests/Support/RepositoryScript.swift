import Foundation
@_spi(PGModelInternals) import PGModelCore

/// The checkout's `scripts/`, run by tests that start real programs (PgBouncer, a standby, the topology).
enum RepositoryScript {
    /// The checkout, from this file's path.
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// `bash scripts/<script> arguments…` with `environment` added to this process's, blocking its thread
    /// (callers run it off the cooperative pool); its standard output, trimmed. A non-zero exit throws.
    ///
    /// ```swift
    /// let url = try RepositoryScript.run("pgbouncer.sh", ["start", directory, upstream, "3"])
    /// ```
    @discardableResult
    static func run(_ script: String, _ arguments: [String], environment: [String: String] = [:]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = [repository.appendingPathComponent("scripts/\(script)").path] + arguments
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw PGModelError(.internalError, "scripts/\(script) \(arguments.first ?? "") failed with status \(process.terminationStatus)")
        }
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
