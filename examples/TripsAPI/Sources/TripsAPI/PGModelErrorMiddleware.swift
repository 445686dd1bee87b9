import Hummingbird
import Logging
import PGModel

/// Turns PGModel's typed errors thrown by any route into ``APIError`` answers (404, 409, 400, …), in
/// one place, and logs the ones that are the server's problem (5xx) with their full message.
///
/// ```swift
/// let router = Router()
/// router.add(middleware: PGModelErrorMiddleware())
/// ```
public struct PGModelErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    /// The middleware.
    ///
    /// ```swift
    /// router.add(middleware: PGModelErrorMiddleware())
    /// ```
    public init() {}

    /// Runs the rest of the chain and maps a `PGModelError` it throws.
    ///
    /// ```swift
    /// let response = try await middleware.handle(request, context: context, next: responder)
    /// ```
    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as PGModelError {
            let mapped = APIError(error)
            if mapped.status.code >= 500 {
                context.logger.error("PGModel error", metadata: ["code": "\(error.code)", "message": "\(error.message)"])
            }
            throw mapped
        }
    }
}
