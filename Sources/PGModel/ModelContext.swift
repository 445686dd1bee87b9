import PGModelCore

/// Work in progress: replaced by the full context shortly.
public final class ModelContext {
    func modelDidChange(_ model: any PersistentModel) {}
}
