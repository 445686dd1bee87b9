import NIOConcurrencyHelpers
import NIOCore
@_spi(PGModelInternals) import PGModelWire

/// The server's one ``LoginThrottle``, shared by every connection, so that reconnecting does not reset
/// a guesser's count.
///
/// ```swift
/// let guard = LoginGuard(policy: LoginThrottle.Policy())
/// if let refusal = guard.refusal(user: hello.user, address: LoginGuard.address(of: channel)) { … }
/// ```
final class LoginGuard: Sendable {
    private let throttle: NIOLockedValueBox<LoginThrottle>

    init(policy: LoginThrottle.Policy) {
        throttle = NIOLockedValueBox(LoginThrottle(policy: policy))
    }

    /// The `rate_limited` error to answer instead of checking the password, or `nil` to check it.
    func refusal(user: String, address: String) -> WireError? {
        let verdict = throttle.withLockedValue { $0.check(user: user, address: address, now: .now) }
        guard case .throttled(let retryAfter) = verdict else { return nil }
        return WireError(.rateLimited, "too many failed logins for this user name or address; try again in \(Self.wholeSeconds(retryAfter)) s")
    }

    /// Whole seconds, rounded up: "try again in 0 s" would invite an immediate retry.
    static func wholeSeconds(_ duration: Duration) -> Int64 {
        let parts = duration.components
        return parts.seconds + (parts.attoseconds > 0 ? 1 : 0)
    }

    /// Records a checked `hello`'s outcome. Only wrong credentials count as failures: a database outage
    /// must not lock everybody out.
    func record(_ outcome: Result<SessionUser, WireError>, user: String, address: String) {
        throttle.withLockedValue {
            switch outcome {
            case .success(let session): $0.recordSuccess(user: session.name, address: address, now: .now)
            case .failure(let error) where error.code == .authenticationFailed:
                $0.recordFailure(user: user, address: address, now: .now)
            case .failure: break
            }
        }
    }

    /// The client's IP address without its port: the unit a guesser cannot change by reconnecting.
    static func address(of channel: any Channel) -> String {
        channel.remoteAddress?.ipAddress ?? "unknown"
    }
}
