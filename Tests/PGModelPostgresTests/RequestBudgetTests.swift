import NIOCore
@_spi(PGModelInternals) import PGModelPostgres
import Testing

/// A client's deadline shortens every wait of its request, but never to nothing: a call past it still
/// starts and fails with its own `timeout`.
@Suite("The request budget")
struct RequestBudgetTests {
    @Test func withoutADeadlineTheGatewaysOwnTimeoutHolds() {
        #expect(RequestBudget().timeout(within: .seconds(30)) == .seconds(30))
    }

    @Test func aDeadlineShortensLongerTimeoutsAndKeepsShorterOnes() {
        let now = NIODeadline.now()
        let budget = RequestBudget(deadline: now + .seconds(2))
        #expect(budget.timeout(within: .seconds(30), now: now) == .seconds(2))
        #expect(budget.timeout(within: .milliseconds(100), now: now) == .milliseconds(100))
    }

    @Test func aPassedDeadlineLeavesOneMillisecond() {
        let now = NIODeadline.now()
        #expect(RequestBudget(deadline: now - .seconds(1)).timeout(within: .seconds(30), now: now) == .milliseconds(1))
    }
}
