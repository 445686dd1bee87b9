import Foundation

/// Self-signed certificates made for one test with the `openssl` command-line tool, in a fresh
/// temporary directory: nothing is checked in, and nothing outlives the run but that directory.
///
/// ```swift
/// let certificate = try TestCertificates.make(names: ["localhost", "127.0.0.1"])
/// configuration.tlsCertificatePath = certificate.certificatePath
/// ```
struct TestCertificates: Sendable {
    /// The PEM certificate; being self-signed, it is also the CA file a client trusts.
    let certificatePath: String
    /// The PEM private key.
    let keyPath: String

    struct OpenSSLFailed: Error, CustomStringConvertible {
        var status: Int32
        var output: String
        var description: String { "openssl failed with status \(status): \(output)" }
    }

    /// A certificate for `names` (DNS names and IP addresses, in its subject alternative names).
    static func make(names: [String]) throws -> TestCertificates {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("pgmodel-tls-\(UUID().uuidString.lowercased())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let certificate = directory.appendingPathComponent("server.pem").path
        let key = directory.appendingPathComponent("server.key").path
        let alternativeNames = names.map { name in
            name.allSatisfy { $0.isNumber || $0 == "." || $0 == ":" } ? "IP:\(name)" : "DNS:\(name)"
        }.joined(separator: ",")
        try run([
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2",
            "-subj", "/CN=\(names.first ?? "pgmodel-test")", "-addext", "subjectAltName=\(alternativeNames)",
            "-keyout", key, "-out", certificate,
        ])
        return TestCertificates(certificatePath: certificate, keyPath: key)
    }

    private static func run(_ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: FileManager.default.isExecutableFile(atPath: "/usr/bin/openssl")
            ? "/usr/bin/openssl" : "/usr/local/bin/openssl")
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw OpenSSLFailed(status: process.terminationStatus, output: text) }
    }
}
