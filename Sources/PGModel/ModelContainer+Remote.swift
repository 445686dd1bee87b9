import Foundation
import NIOCore
import PGModelCore

extension ModelContainer {
    static func makeRemoteStore(url: URL, eventLoop: any EventLoop) throws -> any ModelStore {
        throw PGModelError(.invalidConfiguration, "the pgmodel:// store is not built yet")
    }
}
