extension ModelContext {
    /// SwiftData's hook for coalescing changes into the undo manager. PGModel records every change as it is
    /// made and has no undo manager (Linux Foundation has no `UndoManager`), so there is nothing to
    /// process: the call exists so code written for SwiftData compiles and behaves the same.
    ///
    /// ```swift
    /// trip.name = "Lisbon"
    /// context.processPendingChanges()
    /// #expect(context.hasChanges)
    /// ```
    public func processPendingChanges() {}
}
