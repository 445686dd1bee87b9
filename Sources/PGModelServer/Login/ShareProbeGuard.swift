import NIOConcurrencyHelpers
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelWire

/// Slows a logged-in user who probes with shares: a share, revocation or share list naming a user name
/// that does not exist, or a record the caller cannot see, is answered `not_found`, and user names are
/// not secret from logged-in users. Each such answer counts against the acting user and their client
/// address across connections (a ``LoginThrottle`` of its own); past the free allowance, requests that
/// name shares get `rate_limited` before they run, for a time that doubles with each further miss.
///
/// A correct client rarely meets `not_found` here (a mistyped name, a record deleted meanwhile), so the
/// allowance costs honest users nothing while a dictionary of names or ids takes hours.
///
/// ```swift
/// let probes = ShareProbeGuard(policy: ShareProbeGuard.defaultPolicy)
/// if ShareProbeGuard.namesShares(request.operation), let refusal = probes.refusal(user: user.name, address: address) { … }
/// probes.record(response, of: request.operation, user: user.name, address: address)
/// ```
final class ShareProbeGuard: Sendable {
    private let throttle: NIOLockedValueBox<LoginThrottle>

    init(policy: LoginThrottle.Policy) {
        throttle = NIOLockedValueBox(LoginThrottle(policy: policy))
    }

    /// Whether `operation` names shares: `share`, `unshare`, `shares`, or a `save` with `shares`.
    static func namesShares(_ operation: Request.Operation) -> Bool {
        switch operation {
        case .share, .unshare, .shares: true
        case .save(let request): !request.shares.isEmpty
        default: false
        }
    }

    /// The `rate_limited` error to answer instead of running a request that names shares, or `nil`.
    func refusal(user: String, address: String) -> WireError? {
        let verdict = throttle.withLockedValue { $0.check(user: user, address: address, now: .now) }
        guard case .throttled(let retryAfter) = verdict else { return nil }
        return WireError(.rateLimited, "too many shares naming unknown users or records; try again in \(LoginGuard.wholeSeconds(retryAfter)) s")
    }

    /// Counts a `not_found` answer to a request that named shares.
    func record(_ response: Response, of operation: Request.Operation, user: String, address: String) {
        guard Self.namesShares(operation), case .failure(let error) = response.result, error.code == .notFound else { return }
        throttle.withLockedValue { $0.recordFailure(user: user, address: address, now: .now) }
    }
}
