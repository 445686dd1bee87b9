import Foundation
@_spi(PGModelInternals) import PGModelCore
import PGModelTestSupport
import Testing

@_spi(PGModelInternals) @testable import PGModel
import PGModelTesting

/// Random sequences of graph edits in one context — inserts, deletes, re-parenting through either
/// side, swaps, optional and non-optional relationships, one-to-one, many-to-many, cascades, nullify,
/// deny and a subclass — saved at random points. After each save the store (read by a fresh context)
/// and the working context's own models are compared with a plain-Swift model of the graph that
/// follows SwiftData's rule: what the context's models say when `save()` is called is what the store
/// holds after it. A failing run is shrunk to the shortest sequence of edits that still fails, and that
/// sequence is printed.
///
/// `PGMODEL_GRAPH_SEEDS` (default 24) and `PGMODEL_GRAPH_EDITS` (default 70) size it;
/// `PGMODEL_GRAPH_SEED` replays one seed.
@Suite("Graph edits: randomized against a plain model")
struct GraphEditRandomizedTests {
    static var seedCount: Int { ProcessInfo.processInfo.environment["PGMODEL_GRAPH_SEEDS"].flatMap(Int.init) ?? 24 }
    static var editCount: Int { ProcessInfo.processInfo.environment["PGMODEL_GRAPH_EDITS"].flatMap(Int.init) ?? 70 }

    @Test(arguments: StoreKind.tested)
    func randomEditsMatchThePlainModel(kind: StoreKind) async throws {
        let seeds: [UInt64]
        if let one = ProcessInfo.processInfo.environment["PGMODEL_GRAPH_SEED"].flatMap(UInt64.init) {
            seeds = [one]
        } else {
            let base = UInt64.random(in: 1...(UInt64.max / 2))
            seeds = (0..<UInt64(Self.seedCount)).map { base &+ $0 }
        }
        for seed in seeds {
            var generator = SeededGenerator(state: seed)
            let edits = GraphEditScript.generate(count: Self.editCount, using: &generator)
            guard let failure = try await Self.run(edits, kind: kind) else { continue }
            let shortest = try await Self.shrink(edits, kind: kind)
            let listing = shortest.edits.enumerated().map { "  \($0.offset): \($0.element)" }.joined(separator: "\n")
            Issue.record("""
                seed \(seed) on the \(kind) store failed after \(failure.step) edits: \(failure.message)
                shortest failing sequence (\(shortest.edits.count) edits): \(shortest.failure.message)
                \(listing)
                """)
            return
        }
    }

    /// Runs `edits` on a fresh store; the first difference from the plain model, or nil.
    static func run(_ edits: [GraphEdit], kind: StoreKind) async throws -> GraphEditFailure? {
        let fixture = try await StoreFixture.make(kind, EditGraph.models, service: kind == .service ? try await TestService.seeds() : nil)
        return try await offCooperativePool {
            var runner = GraphEditRunner(fixture: fixture)
            return runner.run(edits)
        }
    }

    /// The shortest sublist of `edits` that still fails (greedy: drop chunks, then single edits).
    static func shrink(_ edits: [GraphEdit], kind: StoreKind) async throws -> (edits: [GraphEdit], failure: GraphEditFailure) {
        var current = edits
        guard var failure = try await run(current, kind: kind) else {
            return (edits, GraphEditFailure(step: edits.count, message: "did not fail again"))
        }
        // Nothing after the failing edit matters.
        current = Array(current.prefix(failure.step + 1))
        var chunk = max(1, current.count / 2)
        var attempts = 0
        while chunk >= 1, attempts < 400 {
            var removedAny = false
            var start = 0
            while start < current.count, attempts < 400 {
                let end = min(start + chunk, current.count)
                let candidate = Array(current[..<start] + current[end...])
                attempts += 1
                if !candidate.isEmpty, let found = try await run(candidate, kind: kind) {
                    current = Array(candidate.prefix(found.step + 1))
                    failure = found
                    removedAny = true
                } else {
                    start += chunk
                }
            }
            if !removedAny { chunk /= 2 }
        }
        return (current, failure)
    }
}

/// Where a run first differed from the plain model.
struct GraphEditFailure: Sendable, Error {
    var step: Int
    var message: String
}

/// How an edit reaches a to-many relationship.
enum ToManyWay: String, CaseIterable, Sendable {
    /// `doc.folder = folder` (the inverse to-one).
    case inverse
    /// `folder.docs?.append(doc)`.
    case append
    /// `folder.docs?.insert(doc, at: 0)`.
    case insertFirst
    /// `folder.docs?[0] = doc`: the doc that was there leaves.
    case subscriptFirst
    /// `folder.docs = (folder.docs ?? []) + [doc]`.
    case wholeArray
    /// `folder.docs = [doc]`: every other doc leaves.
    case replaceAll
}

/// One edit of the graph. Models are named by the number their creation edit gave them; an edit that
/// names a model that does not exist (any more) is skipped, so a shrunk list still replays.
enum GraphEdit: Sendable, CustomStringConvertible {
    case newFolder(Int, archive: Bool)
    case newDoc(Int, folder: Int?, way: ToManyWay)
    case newTag(Int, folder: Int?)
    case newCover(Int, folder: Int?, fromFolder: Bool)
    case newLock(Int, folder: Int?)
    case newNote(Int, doc: Int)
    case moveDoc(Int, to: Int?, way: ToManyWay)
    /// `folder.docs?.removeAll { $0 === doc }` (or `remove(at:)`): the doc leaves its folder.
    case removeDoc(Int, byIndex: Bool)
    case swapDocs(Int, Int)
    case moveTag(Int, to: Int?, fromFolder: Bool)
    case link(doc: Int, tag: Int, fromDoc: Bool)
    case unlink(doc: Int, tag: Int, fromDoc: Bool)
    case setTags(doc: Int, [Int])
    case setCover(folder: Int, cover: Int?, fromFolder: Bool)
    case swapCovers(Int, Int)
    case moveLock(Int, to: Int?)
    case moveNote(Int, to: Int)
    case rename(Int, String)
    case delete(Int)
    case save
    /// Saves, then goes on in a new context whose models are fetched again (relationships are faults).
    case reload

    var description: String {
        switch self {
        case .newFolder(let n, let archive): "#\(n) = \(archive ? "GraphArchive" : "GraphFolder")()"
        case .newDoc(let n, let folder, let way): "#\(n) = GraphDoc() into \(folder.map { "#\($0)" } ?? "nothing") by \(way)"
        case .newTag(let n, let folder): "#\(n) = GraphTag(folder: \(folder.map { "#\($0)" } ?? "nil"))"
        case .newCover(let n, let folder, let fromFolder): "#\(n) = GraphCover() of \(folder.map { "#\($0)" } ?? "nothing") set from the \(fromFolder ? "folder" : "cover")"
        case .newLock(let n, let folder): "#\(n) = GraphLock(folder: \(folder.map { "#\($0)" } ?? "nil"))"
        case .newNote(let n, let doc): "#\(n) = GraphNote(doc: #\(doc))"
        case .moveDoc(let d, let to, let way): "move doc #\(d) to \(to.map { "#\($0)" } ?? "nil") by \(way)"
        case .removeDoc(let d, let byIndex): "remove doc #\(d) from its folder's docs \(byIndex ? "by index" : "by removeAll")"
        case .swapDocs(let a, let b): "swap the folders of docs #\(a) and #\(b)"
        case .moveTag(let t, let to, let fromFolder): "move tag #\(t) to \(to.map { "#\($0)" } ?? "nil") from the \(fromFolder ? "folder" : "tag")"
        case .link(let d, let t, let fromDoc): "link doc #\(d) and tag #\(t) from the \(fromDoc ? "doc" : "tag")"
        case .unlink(let d, let t, let fromDoc): "unlink doc #\(d) and tag #\(t) from the \(fromDoc ? "doc" : "tag")"
        case .setTags(let d, let tags): "doc #\(d).tags = \(tags.map { "#\($0)" })"
        case .setCover(let f, let c, let fromFolder): "cover of #\(f) = \(c.map { "#\($0)" } ?? "nil") from the \(fromFolder ? "folder" : "cover")"
        case .swapCovers(let a, let b): "swap the covers of #\(a) and #\(b)"
        case .moveLock(let l, let to): "lock #\(l).folder = \(to.map { "#\($0)" } ?? "nil")"
        case .moveNote(let n, let d): "note #\(n).doc = #\(d)"
        case .rename(let n, let name): "rename #\(n) to \(name)"
        case .delete(let n): "delete #\(n)"
        case .save: "save"
        case .reload: "save and go on in a new context"
        }
    }
}

/// The plain-Swift model: every live model's kind, name and the relationships it holds on the side that
/// stores them (a to-one's target, a doc's tags); the other sides follow.
struct PlainGraph: Equatable {
    enum Kind: String, Equatable { case folder, archive, doc, tag, cover, lock, note }
    struct Node: Equatable, CustomStringConvertible {
        var kind: Kind
        var name: String
        var folder: Int?
        var doc: Int?
        var tags: Set<Int> = []
        var description: String {
            var parts = ["\(kind) '\(name)'"]
            if let folder { parts.append("folder #\(folder)") }
            if let doc { parts.append("doc #\(doc)") }
            if !tags.isEmpty { parts.append("tags \(tags.sorted().map { "#\($0)" })") }
            return parts.joined(separator: ", ")
        }
    }

    var nodes: [Int: Node] = [:]

    func isFolder(_ n: Int?) -> Bool { n.flatMap { nodes[$0] }.map { $0.kind == .folder || $0.kind == .archive } ?? false }
    func ids(of kinds: Kind...) -> [Int] { nodes.filter { kinds.contains($0.value.kind) }.keys.sorted() }
    func docs(in folder: Int) -> [Int] { nodes.filter { $0.value.kind == .doc && $0.value.folder == folder }.keys.sorted() }
    func cover(of folder: Int) -> Int? { nodes.first { $0.value.kind == .cover && $0.value.folder == folder }?.key }

    /// The rows `deleted` take with them through `.cascade`; nil when a `.deny` rule refuses.
    func deletions(_ deleted: Set<Int>) -> Set<Int>? {
        var closure = deleted.filter { nodes[$0] != nil }
        while true {
            let reached = nodes.filter { id, node in
                guard !closure.contains(id) else { return false }
                switch node.kind {
                case .doc, .cover: return node.folder.map(closure.contains) ?? false
                case .note: return node.doc.map(closure.contains) ?? false
                default: return false
                }
            }.keys
            if reached.isEmpty { break }
            closure.formUnion(reached)
        }
        let denied = nodes.contains { id, node in node.kind == .lock && !closure.contains(id) && (node.folder.map(closure.contains) ?? false) }
        return denied ? nil : closure
    }

    /// The graph after `closure` is deleted: references to deleted models nullified.
    mutating func remove(_ closure: Set<Int>) {
        for id in closure { nodes[id] = nil }
        for id in nodes.keys {
            if let folder = nodes[id]?.folder, closure.contains(folder) { nodes[id]?.folder = nil }
            nodes[id]?.tags.subtract(closure)
        }
    }
}

/// Draws edits that mostly make sense for the graph as the script imagines it (a rough shadow: the
/// runner skips what does not apply).
enum GraphEditScript {
    /// `count` edits (and a last save); `existing` names the models made by earlier edits, numbered below `next`.
    static func generate(count: Int, existing: PlainGraph = PlainGraph(), next first: Int = 0,
                         using generator: inout SeededGenerator) -> [GraphEdit] {
        var edits: [GraphEdit] = []
        var next = first
        var folders = existing.ids(of: .folder, .archive), docs = existing.ids(of: .doc), tags = existing.ids(of: .tag)
        var covers = existing.ids(of: .cover), locks = existing.ids(of: .lock), notes = existing.ids(of: .note)
        func pick(_ list: [Int]) -> Int? { list.isEmpty ? nil : list[Int.random(in: 0..<list.count, using: &generator)] }
        func maybe(_ list: [Int]) -> Int? { Bool.random(using: &generator) ? pick(list) : nil }
        func chance(_ percent: Int) -> Bool { Int.random(in: 0..<100, using: &generator) < percent }
        while edits.count < count {
            let roll = Int.random(in: 0..<100, using: &generator)
            let edit: GraphEdit?
            switch roll {
            case 0..<8:
                folders.append(next); edit = .newFolder(next, archive: chance(35)); next += 1
            case 8..<18:
                docs.append(next)
                edit = .newDoc(next, folder: chance(80) ? pick(folders) : nil, way: ToManyWay.allCases.randomElement(using: &generator) ?? .inverse)
                next += 1
            case 18..<22:
                tags.append(next); edit = .newTag(next, folder: maybe(folders)); next += 1
            case 22..<26:
                covers.append(next); edit = .newCover(next, folder: maybe(folders), fromFolder: chance(50)); next += 1
            case 26..<29:
                locks.append(next); edit = .newLock(next, folder: maybe(folders)); next += 1
            case 29..<33:
                if let doc = pick(docs) { notes.append(next); edit = .newNote(next, doc: doc); next += 1 } else { edit = nil }
            case 33..<47:
                edit = pick(docs).map { .moveDoc($0, to: chance(85) ? pick(folders) : nil, way: ToManyWay.allCases.randomElement(using: &generator) ?? .inverse) }
            case 47..<51:
                edit = pick(docs).map { .removeDoc($0, byIndex: chance(50)) }
            case 51..<54:
                if let a = pick(docs), let b = pick(docs), a != b { edit = .swapDocs(a, b) } else { edit = nil }
            case 54..<57:
                edit = pick(tags).map { .moveTag($0, to: maybe(folders), fromFolder: chance(50)) }
            case 57..<62:
                if let d = pick(docs), let t = pick(tags) { edit = .link(doc: d, tag: t, fromDoc: chance(50)) } else { edit = nil }
            case 62..<65:
                if let d = pick(docs), let t = pick(tags) { edit = .unlink(doc: d, tag: t, fromDoc: chance(50)) } else { edit = nil }
            case 65..<67:
                edit = pick(docs).map { d in .setTags(doc: d, tags.filter { _ in chance(40) }) }
            case 67..<71:
                edit = pick(folders).map { .setCover(folder: $0, cover: chance(80) ? pick(covers) : nil, fromFolder: chance(50)) }
            case 71..<73:
                if let a = pick(folders), let b = pick(folders), a != b { edit = .swapCovers(a, b) } else { edit = nil }
            case 73..<76:
                edit = pick(locks).map { .moveLock($0, to: maybe(folders)) }
            case 76..<78:
                if let n = pick(notes), let d = pick(docs) { edit = .moveNote(n, to: d) } else { edit = nil }
            case 78..<82:
                edit = pick(Array(0..<next)).map { .rename($0, "n\(Int.random(in: 0..<1000, using: &generator))") }
            case 82..<90:
                edit = pick(Array(0..<next)).map { .delete($0) }
            case 90..<92:
                edit = .reload
            default:
                edit = .save
            }
            if let edit { edits.append(edit) }
        }
        edits.append(.save)
        return edits
    }
}

/// Carries out edits on a real context and on the plain model side by side.
struct GraphEditRunner {
    typealias Folder = EditGraph.GraphFolder
    typealias Archive = EditGraph.GraphArchive
    typealias Doc = EditGraph.GraphDoc
    typealias Tag = EditGraph.GraphTag
    typealias Cover = EditGraph.GraphCover
    typealias Lock = EditGraph.GraphLock
    typealias Note = EditGraph.GraphNote

    /// A new context on the same store, to read what it holds.
    var makeReader: () -> ModelContext
    var context: ModelContext
    /// The graph as the context's models should show it now.
    var plain = PlainGraph()
    /// The graph as the store should hold it (as of the last save).
    var committed = PlainGraph()
    /// Models deleted since the last save.
    var pendingDeletes: Set<Int> = []
    var models: [Int: any PersistentModel] = [:]
    var numbers: [UUID: Int] = [:]

    init(fixture: StoreFixture) {
        self.init(context: fixture.newContext(), makeReader: { fixture.newContext() })
    }

    init(context: ModelContext, makeReader: @escaping () -> ModelContext) {
        self.context = context
        self.makeReader = makeReader
    }

    mutating func run(_ edits: [GraphEdit]) -> GraphEditFailure? {
        for (step, edit) in edits.enumerated() {
            do {
                try apply(edit)
            } catch let failure as GraphEditFailure {
                return GraphEditFailure(step: step, message: "after '\(edit)': \(failure.message)")
            } catch {
                return GraphEditFailure(step: step, message: "'\(edit)' threw \(error)")
            }
        }
        return nil
    }

    func live(_ n: Int?) -> Bool { n.map { plain.nodes[$0] != nil && !pendingDeletes.contains($0) } ?? true }
    func model<T>(_ n: Int, as _: T.Type) -> T? {
        guard live(n) else { return nil }
        return models[n] as? T
    }

    mutating func created(_ n: Int, _ model: any PersistentModel, _ node: PlainGraph.Node) -> Bool {
        guard plain.nodes[n] == nil, models[n] == nil else { return false }
        models[n] = model
        numbers[model._$backingData.id] = n
        plain.nodes[n] = node
        return true
    }

    // swiftlint:disable:next cyclomatic_complexity function_body_length
    mutating func apply(_ edit: GraphEdit) throws {
        switch edit {
        case .newFolder(let n, let archive):
            let folder: Folder = archive ? Archive(name: "f\(n)", shelf: n) : Folder(name: "f\(n)")
            guard created(n, folder, .init(kind: archive ? .archive : .folder, name: "f\(n)")) else { return }
            context.insert(folder)
        case .newDoc(let n, let f, let way):
            let doc = Doc(title: "d\(n)")
            guard created(n, doc, .init(kind: .doc, name: "d\(n)")) else { return }
            if let f, live(f), let folder = model(f, as: Folder.self) {
                // Appended to a folder of the context without an insert of its own: the context adopts it.
                if way == .inverse { context.insert(doc) }
                try moveDoc(n, doc, to: f, folder, way: way)
            } else {
                context.insert(doc)
            }
        case .newTag(let n, let f):
            let tag = Tag(label: "t\(n)")
            guard created(n, tag, .init(kind: .tag, name: "t\(n)")) else { return }
            context.insert(tag)
            if let f, let folder = model(f, as: Folder.self) {
                tag.folder = folder
                plain.nodes[n]?.folder = f
            }
        case .newCover(let n, let f, let fromFolder):
            let cover = Cover(color: "c\(n)")
            guard created(n, cover, .init(kind: .cover, name: "c\(n)")) else { return }
            context.insert(cover)
            if let f, let folder = model(f, as: Folder.self) { setCover(f, folder, n, cover, fromFolder: fromFolder) }
        case .newLock(let n, let f):
            let lock = Lock(code: "l\(n)")
            guard created(n, lock, .init(kind: .lock, name: "l\(n)")) else { return }
            context.insert(lock)
            if let f, let folder = model(f, as: Folder.self) {
                lock.folder = folder
                plain.nodes[n]?.folder = f
            }
        case .newNote(let n, let d):
            guard let doc = model(d, as: Doc.self) else { return }
            let note = Note(text: "n\(n)", doc: doc)
            guard created(n, note, .init(kind: .note, name: "n\(n)", doc: d)) else { return }
            context.insert(note)
        case .moveDoc(let d, let to, let way):
            guard let doc = model(d, as: Doc.self), live(to) else { return }
            if let to {
                guard let folder = model(to, as: Folder.self), plain.nodes[d]?.folder != to else { return }
                try moveDoc(d, doc, to: to, folder, way: way)
            } else {
                doc.folder = nil
                plain.nodes[d]?.folder = nil
            }
        case .removeDoc(let d, let byIndex):
            guard let doc = model(d, as: Doc.self), let f = plain.nodes[d]?.folder, let folder = models[f] as? Folder else { return }
            if byIndex {
                guard let index = folder.docs?.firstIndex(where: { $0 === doc }) else {
                    throw GraphEditFailure(step: 0, message: "doc #\(d) is not in its folder #\(f)'s docs")
                }
                folder.docs?.remove(at: index)
            } else {
                folder.docs?.removeAll { $0 === doc }
            }
            plain.nodes[d]?.folder = nil
        case .swapDocs(let a, let b):
            guard let docA = model(a, as: Doc.self), let docB = model(b, as: Doc.self) else { return }
            (docA.folder, docB.folder) = (docB.folder, docA.folder)
            let folderA = plain.nodes[a]?.folder, folderB = plain.nodes[b]?.folder
            plain.nodes[a]?.folder = folderB
            plain.nodes[b]?.folder = folderA
        case .moveTag(let t, let to, let fromFolder):
            guard let tag = model(t, as: Tag.self), live(to) else { return }
            if fromFolder {
                if let to, let folder = model(to, as: Folder.self) {
                    guard plain.nodes[t]?.folder != to else { return }
                    folder.tags.append(tag)
                } else if let old = plain.nodes[t]?.folder, let folder = models[old] as? Folder {
                    folder.tags.removeAll { $0 === tag }
                } else {
                    return
                }
            } else {
                tag.folder = to.flatMap { model($0, as: Folder.self) }
            }
            plain.nodes[t]?.folder = to
        case .link(let d, let t, let fromDoc):
            guard let doc = model(d, as: Doc.self), let tag = model(t, as: Tag.self), plain.nodes[d]?.tags.contains(t) == false else { return }
            if fromDoc { doc.tags.append(tag) } else { tag.docs.append(doc) }
            plain.nodes[d]?.tags.insert(t)
        case .unlink(let d, let t, let fromDoc):
            guard let doc = model(d, as: Doc.self), let tag = model(t, as: Tag.self), plain.nodes[d]?.tags.contains(t) == true else { return }
            if fromDoc { doc.tags.removeAll { $0 === tag } } else { tag.docs.removeAll { $0 === doc } }
            plain.nodes[d]?.tags.remove(t)
        case .setTags(let d, let list):
            guard let doc = model(d, as: Doc.self) else { return }
            let chosen = list.filter { live($0) && models[$0] is Tag }
            // Tags of the doc deleted since the last save stay in its array until the save: keep them.
            let dying = (plain.nodes[d]?.tags ?? []).filter { pendingDeletes.contains($0) }
            doc.tags = chosen.compactMap { models[$0] as? Tag } + doc.tags.filter { tag in dying.contains { models[$0] === tag } }
            plain.nodes[d]?.tags = Set(chosen).union(dying)
        case .setCover(let f, let c, let fromFolder):
            guard let folder = model(f, as: Folder.self), live(c) else { return }
            if let c {
                guard let cover = model(c, as: Cover.self) else { return }
                setCover(f, folder, c, cover, fromFolder: fromFolder)
            } else {
                guard let old = plain.cover(of: f) else { return }
                if fromFolder {
                    folder.cover = nil
                } else if let cover = models[old] as? Cover {
                    cover.folder = nil
                }
                plain.nodes[old]?.folder = nil
            }
        case .swapCovers(let a, let b):
            guard let folderA = model(a, as: Folder.self), let folderB = model(b, as: Folder.self) else { return }
            (folderA.cover, folderB.cover) = (folderB.cover, folderA.cover)
            let coverA = plain.cover(of: a), coverB = plain.cover(of: b)
            if let coverA { plain.nodes[coverA]?.folder = b }
            if let coverB { plain.nodes[coverB]?.folder = a }
        case .moveLock(let l, let to):
            guard let lock = model(l, as: Lock.self), live(to) else { return }
            lock.folder = to.flatMap { model($0, as: Folder.self) }
            plain.nodes[l]?.folder = to
        case .moveNote(let n, let d):
            guard let note = model(n, as: Note.self), let doc = model(d, as: Doc.self) else { return }
            note.doc = doc
            plain.nodes[n]?.doc = d
        case .rename(let n, let name):
            guard live(n), let model = models[n] else { return }
            switch model {
            case let folder as Folder: folder.name = name
            case let doc as Doc: doc.title = name
            case let tag as Tag: tag.label = name
            case let cover as Cover: cover.color = name
            case let lock as Lock: lock.code = name
            case let note as Note: note.text = name
            default: return
            }
            plain.nodes[n]?.name = name
        case .delete(let n):
            guard live(n), let model = models[n] else { return }
            context.delete(model)
            pendingDeletes.insert(n)
        case .save:
            try save()
        case .reload:
            try save()
            try restart()
        }
    }

    mutating func moveDoc(_ d: Int, _ doc: Doc, to f: Int, _ folder: Folder, way: ToManyWay) throws {
        switch way {
        case .inverse:
            doc.folder = folder
        case .append:
            folder.docs?.append(doc)
        case .insertFirst:
            folder.docs?.insert(doc, at: 0)
        case .subscriptFirst:
            if let first = folder.docs?.first, first !== doc, let replaced = numbers[first._$backingData.id] {
                folder.docs?[0] = doc
                plain.nodes[replaced]?.folder = nil
            } else {
                folder.docs?.append(doc)
            }
        case .wholeArray:
            folder.docs = (folder.docs ?? []) + [doc]
        case .replaceAll:
            for other in plain.docs(in: f) { plain.nodes[other]?.folder = nil }
            folder.docs = [doc]
        }
        plain.nodes[d]?.folder = f
    }

    mutating func setCover(_ f: Int, _ folder: Folder, _ c: Int, _ cover: Cover, fromFolder: Bool) {
        if fromFolder { folder.cover = cover } else { cover.folder = folder }
        if let old = plain.cover(of: f), old != c { plain.nodes[old]?.folder = nil }
        plain.nodes[c]?.folder = f
    }

    mutating func save() throws {
        guard let closure = plain.deletions(pendingDeletes) else {
            do {
                try context.save()
            } catch let error as PGModelError where error.code == .deleteDenied {
                // Nothing was written: drop the refused edits (a migration stage saves its context
                // when `willMigrate` returns) and start over from the store with a new context.
                context.rollback()
                try restart()
                return
            }
            throw GraphEditFailure(step: 0, message: "a save that a .deny rule refuses succeeded")
        }
        try context.save()
        plain.remove(closure)
        for id in closure {
            if let model = models[id] { numbers[model._$backingData.id] = nil }
            models[id] = nil
        }
        pendingDeletes = []
        committed = plain
        try compare(context: context, expected: plain, what: "the saving context")
        let reader = makeReader()
        try compare(reader: reader, expected: committed)
    }

    /// After a refused save: a new context on what the store holds.
    mutating func restart() throws {
        try restart(with: makeReader())
    }

    /// Goes on in `newContext` (another context on the same store) from what the store holds.
    mutating func restart(with newContext: ModelContext) throws {
        context = newContext
        plain = committed
        pendingDeletes = []
        let fetched = try fetchAll(context)
        models = [:]
        for (n, model) in fetched { models[n] = model }
        try compare(reader: context, expected: committed)
    }

    /// Every model of the store, by number; a row the plain model does not know is a failure.
    func fetchAll(_ reader: ModelContext) throws -> [Int: any PersistentModel] {
        var result: [Int: any PersistentModel] = [:]
        func add(_ model: any PersistentModel) throws {
            guard let n = numbers[model._$backingData.id] else {
                throw GraphEditFailure(step: 0, message: "the store holds a \(type(of: model)) the app never made or already deleted")
            }
            result[n] = model
        }
        for model in try reader.fetch(FetchDescriptor<Folder>()) { try add(model) }
        var docs = FetchDescriptor<Doc>()
        docs.relationshipKeyPathsForPrefetching = [\.tags]
        for model in try reader.fetch(docs) { try add(model) }
        for model in try reader.fetch(FetchDescriptor<Tag>()) { try add(model) }
        for model in try reader.fetch(FetchDescriptor<Cover>()) { try add(model) }
        for model in try reader.fetch(FetchDescriptor<Lock>()) { try add(model) }
        for model in try reader.fetch(FetchDescriptor<Note>()) { try add(model) }
        return result
    }

    func compare(reader: ModelContext, expected: PlainGraph) throws {
        let fetched = try fetchAll(reader)
        let missing = Set(expected.nodes.keys).subtracting(fetched.keys)
        if let first = missing.sorted().first {
            throw GraphEditFailure(step: 0, message: "the store lost #\(first) (\(expected.nodes[first].map(\.description) ?? "?"))")
        }
        try compare(fetched, expected: expected, what: "a fresh context")
    }

    func compare(context: ModelContext, expected: PlainGraph) throws {
        try compare(context: context, expected: expected, what: "the saving context")
    }

    func compare(context _: ModelContext, expected: PlainGraph, what: String) throws {
        try compare(models.filter { expected.nodes[$0.key] != nil }, expected: expected, what: what)
    }

    /// Each model's kind, name and relationships against the plain model, both sides of every relationship.
    func compare(_ observed: [Int: any PersistentModel], expected: PlainGraph, what: String) throws {
        func number(_ model: (any PersistentModel)?) -> Int?? {
            guard let model else { return .some(nil) }
            guard let n = self.numbers[model._$backingData.id] else { return nil }
            return .some(n)
        }
        func numberSet(_ list: [any PersistentModel]) throws -> Set<Int> {
            Set(try list.map { model in
                guard let n = self.numbers[model._$backingData.id] else {
                    throw GraphEditFailure(step: 0, message: "\(what) reaches a \(type(of: model)) the app never made or already deleted")
                }
                return n
            })
        }
        for (n, model) in observed.sorted(by: { $0.key < $1.key }) {
            guard let want = expected.nodes[n] else { continue }
            var seen = PlainGraph.Node(kind: want.kind, name: "")
            switch model {
            case let folder as Folder:
                seen.kind = folder is Archive ? .archive : .folder
                seen.name = folder.name
                let docs = try numberSet(folder.docs ?? [])
                if docs != Set(expected.docs(in: n)) {
                    throw GraphEditFailure(step: 0, message: "in \(what), folder #\(n).docs is \(docs.sorted()), expected \(expected.docs(in: n))")
                }
                let tags = try numberSet(folder.tags)
                let wantTags = Set(expected.ids(of: .tag).filter { expected.nodes[$0]?.folder == n })
                if tags != wantTags {
                    throw GraphEditFailure(step: 0, message: "in \(what), folder #\(n).tags is \(tags.sorted()), expected \(wantTags.sorted())")
                }
                let locks = try numberSet(folder.locks)
                let wantLocks = Set(expected.ids(of: .lock).filter { expected.nodes[$0]?.folder == n })
                if locks != wantLocks {
                    throw GraphEditFailure(step: 0, message: "in \(what), folder #\(n).locks is \(locks.sorted()), expected \(wantLocks.sorted())")
                }
                let cover = number(folder.cover)
                if cover != .some(expected.cover(of: n)) {
                    throw GraphEditFailure(step: 0, message: "in \(what), folder #\(n).cover is \(String(describing: cover)), expected \(String(describing: expected.cover(of: n)))")
                }
            case let doc as Doc:
                seen.name = doc.title
                guard let folder = number(doc.folder) else { throw GraphEditFailure(step: 0, message: "in \(what), doc #\(n) has an unknown folder") }
                seen.folder = folder
                seen.tags = try numberSet(doc.tags)
                let notes = try numberSet(doc.notes)
                let wantNotes = Set(expected.ids(of: .note).filter { expected.nodes[$0]?.doc == n })
                if notes != wantNotes {
                    throw GraphEditFailure(step: 0, message: "in \(what), doc #\(n).notes is \(notes.sorted()), expected \(wantNotes.sorted())")
                }
            case let tag as Tag:
                seen.name = tag.label
                guard let folder = number(tag.folder) else { throw GraphEditFailure(step: 0, message: "in \(what), tag #\(n) has an unknown folder") }
                seen.folder = folder
                let docs = try numberSet(tag.docs)
                let wantDocs = Set(expected.ids(of: .doc).filter { expected.nodes[$0]?.tags.contains(n) == true })
                if docs != wantDocs {
                    throw GraphEditFailure(step: 0, message: "in \(what), tag #\(n).docs is \(docs.sorted()), expected \(wantDocs.sorted())")
                }
            case let cover as Cover:
                seen.name = cover.color
                guard let folder = number(cover.folder) else { throw GraphEditFailure(step: 0, message: "in \(what), cover #\(n) has an unknown folder") }
                seen.folder = folder
            case let lock as Lock:
                seen.name = lock.code
                guard let folder = number(lock.folder) else { throw GraphEditFailure(step: 0, message: "in \(what), lock #\(n) has an unknown folder") }
                seen.folder = folder
            case let note as Note:
                seen.name = note.text
                guard let doc = number(note.doc) else { throw GraphEditFailure(step: 0, message: "in \(what), note #\(n) has an unknown doc") }
                seen.doc = doc
            default:
                throw GraphEditFailure(step: 0, message: "in \(what), #\(n) is a \(type(of: model))")
            }
            if seen != want {
                throw GraphEditFailure(step: 0, message: "in \(what), #\(n) is \(seen), expected \(want)")
            }
        }
    }
}

extension GraphEditRunner: @unchecked Sendable {}
