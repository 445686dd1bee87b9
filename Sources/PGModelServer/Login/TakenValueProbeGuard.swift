import NIOConcurrencyHelpers
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelWire

/// Slows a logged-in user who probes values unique across all users (`@Attribute(.globallyUnique)`,
/// `#Unique(…, scope: .allUsers)`): a save whose values another model holds is answered `unique_violation`
/// with the message of ``PGModelError/valueTaken(model:attributes:)``, which tells whether a value (an
/// e-mail address, a handle) is taken by anyone. Each such answer counts against the acting user and their
/// client address across connections (a ``LoginThrottle`` of its own); past the free allowance, saves that
/// insert or update models get `rate_limited` before they run, for a time that doubles with each further one.
///
/// A person choosing a handle meets a few taken ones; a dictionary of addresses takes hours.
///
/// ```swift
/// let probes = TakenValueProbeGuard(policy: LineServerConfiguration().takenValueProbeThrottle)
/// if TakenValueProbeGuard.writesValues(request.operation), let refusal = probes.refusal(user: user.name, address: address) { … }
/// probes.record(response, of: request.operation, user: user.name, address: address)
/// ```
final class TakenValueProbeGuard: Sendable {
    private let throttle: NIOLockedValueBox<LoginThrottle>

    init(policy: LoginThrottle.Policy) {
        throttle = NIOLockedValueBox(LoginThrottle(policy: policy))
    }

    /// Whether `operation` is a save that inserts or updates models: one whose answer may say a value is taken.
    static func writesValues(_ operation: Request.Operation) -> Bool {
        guard case .save(let request) = operation else { return false }
        return !request.inserts.isEmpty || !request.updates.isEmpty
    }

    /// The `rate_limited` error to answer instead of running a save that writes values, or `nil`.
    func refusal(user: String, address: String) -> WireError? {
        let verdict = throttle.withLockedValue { $0.check(user: user, address: address, now: .now) }
        guard case .throttled(let retryAfter) = verdict else { return nil }
        return WireError(.rateLimited, "too many saves met values unique across all users that are taken; try again in \(LoginGuard.wholeSeconds(retryAfter)) s")
    }

    /// Counts a save answered with a value unique across all users that is taken.
    func record(_ response: Response, of operation: Request.Operation, user: String, address: String) {
        guard Self.writesValues(operation), case .failure(let error) = response.result, error.modelError.isValueTaken else { return }
        throttle.withLockedValue { $0.recordFailure(user: user, address: address, now: .now) }
    }
}
