import Foundation
import NIOCore
import PGModelCore

extension ModelContainer {
    /// The service store shares the container's event loop, so a bridged call and the channel it
    /// waits on never need another thread.
    static func makeRemoteStore(url: URL, eventLoop: any EventLoop) throws -> any ModelStore {
        try RemoteModelStore(url: url, eventLoopGroup: eventLoop)
    }
}
