import PGModelMacros
import SwiftSyntaxMacroExpansion

/// The macros as the compiler sees them. `@Attribute`, `@Relationship` and `@Transient` are left out on
/// purpose so the snapshots show them in place; MarkerMacroTests expands them on their own.
let modelMacroSpecs: [String: MacroSpec] = [
    "Model": MacroSpec(type: ModelMacro.self, conformances: ["PersistentModel", "Observable"]),
    "_PersistedProperty": MacroSpec(type: PersistedPropertyMacro.self),
    "Unique": MacroSpec(type: UniqueMacro.self),
    "Index": MacroSpec(type: IndexMacro.self),
]

/// What `@_PersistedProperty` makes of `var <name>: <type>` at member indentation, followed by its
/// `_<name>` peer. `attributes` are the lines written above the property, e.g. `@Attribute(.unique)`.
func persisted(_ name: String, _ type: String, attributes: [String] = [], modifiers: String = "") -> String {
    var lines = attributes.map { "    \($0)" }
    lines += [
        "    \(modifiers)var \(name): \(type) {",
        "        @storageRestrictions(initializes: _\(name))",
        "        init(initialValue) {",
        "            _\(name) = initialValue",
        "        }",
        "        get {",
        "            _$observationRegistrar.access(self, keyPath: \\.\(name))",
        "            self._$willRead(\"\(name)\")",
        "            return _\(name)",
        "        }",
        "        set {",
        "            self._$willRead(\"\(name)\")",
        "            let oldValue = _\(name)",
        "            _$observationRegistrar.withMutation(of: self, keyPath: \\.\(name)) {",
        "                _\(name) = newValue",
        "            }",
        "            self._$didChange(\"\(name)\", from: oldValue, to: newValue)",
        "        }",
        "    }",
        "",
        "    @Transient private var _\(name): \(storageType(type))",
    ]
    return lines.joined(separator: "\n")
}

/// The type of a persisted property's storage: `T?` is spelled `Optional<T>`, so the property's default
/// value (not an implicit `nil`) initializes it.
func storageType(_ type: String) -> String {
    type.hasSuffix("?") ? "Optional<\(type.dropLast())>" : type
}

/// The shape `@Model` gives a class's generated members (see ModelInheritance in the plugin).
enum ModelShape {
    /// A final class: `static` members, constraint lists only when declared.
    case final
    /// A non-final class at the top of a hierarchy: overridable `class var`s, always with constraint lists.
    case base
    /// A model subclass of the named class.
    case subclass(of: String)
}

/// A persisted property as the helpers below describe it: name, type, and the metadata expression
/// (`PGModel.Schema.Attribute(.unique)`) or nil.
typealias PropertySpec = (name: String, type: String, metadata: String?)

/// `@Attribute(arguments)` as schema metadata.
func attribute(_ arguments: String) -> String { "PGModel.Schema.Attribute(\(arguments))" }

/// `@Relationship(arguments)` as schema metadata.
func relationship(_ arguments: String) -> String { "PGModel.Schema.Relationship(\(arguments))" }

/// The members `@Model` adds, in order, for a class with the given persisted properties.
/// `overridable` is the access of members subclasses override (`open ` in an open class).
func generatedMembers(
    _ className: String,
    _ properties: [PropertySpec],
    access: String = "",
    overridable: String? = nil,
    uniqueness: String? = nil,
    globalUniqueness: String? = nil,
    indexes: String? = nil,
    shape: ModelShape = .final,
    defaults: [String: String] = [:]
) -> String {
    let overridable = overridable ?? access
    var lines: [String] = []
    if case .subclass = shape {} else {
        lines += ["    @Transient \(access)lazy var _$backingData = PGModel.ModelBackingData()", ""]
    }
    lines += [
        "    @Transient private lazy var _$observationRegistrar = Observation.ObservationRegistrar()",
        "",
        "    \(access)required init(backingData: PGModel.ModelBackingData) throws {",
    ]
    for property in properties {
        lines.append("        self._\(property.name) = try backingData.value(forKey: \"\(property.name)\", codec: PGModel._AttributeCodecs.codec(\(property.type).self))")
    }
    if case .subclass = shape {
        lines.append("        try super.init(backingData: backingData)")
    } else {
        lines.append("        self._$backingData = backingData")
    }
    if case .base = shape {
        lines.append("        try self._$restoreInheritingValues(from: backingData)")
    }
    lines.append("    }")
    lines.append("")
    // `_$readStoredValues(into:)`: a subclass without properties of its own has none.
    let readerPrefix: String?
    switch shape {
    case .final: readerPrefix = access
    case .base: readerPrefix = overridable
    case .subclass: readerPrefix = properties.isEmpty ? nil : overridable + "override "
    }
    if let readerPrefix {
        lines.append("    \(readerPrefix)func _$readStoredValues(into reader: inout PGModel._StoredValueReader) {")
        if case .subclass = shape { lines.append("        super._$readStoredValues(into: &reader)") }
        for property in properties {
            lines.append("        reader.read(self._\(property.name), PGModel._AttributeCodecs.codec(\(property.type).self))")
        }
        lines += ["    }", ""]
    }
    if case .base = shape {
        lines += ["    \(overridable)func _$restoreInheritingValues(from backingData: PGModel.ModelBackingData) throws {", "    }", ""]
    }
    switch shape {
    case .final: lines.append("    \(access)static var schemaMetadata: [PGModel.Schema.PropertyMetadata] {")
    case .base: lines.append("    \(overridable)class var schemaMetadata: [PGModel.Schema.PropertyMetadata] {")
    case .subclass: lines.append("    \(overridable)override class var schemaMetadata: [PGModel.Schema.PropertyMetadata] {")
    }
    let prefix: String
    if case .subclass = shape { prefix = properties.isEmpty ? "super.schemaMetadata" : "super.schemaMetadata + " } else { prefix = "" }
    if properties.isEmpty {
        lines.append("        " + (prefix.isEmpty ? "[]" : prefix))
    } else {
        lines.append("        \(prefix)[")
        let entries = properties.map { property in
            var entry = "            PGModel.Schema.PropertyMetadata(name: \"\(property.name)\", keypath: \\\(className).\(property.name), codec: PGModel._AttributeCodecs.codec(\(property.type).self)"
            if let metadata = property.metadata { entry += ", metadata: \(metadata)" }
            // A written default reaches the schema (for migrations) as a closure, which the expander formats on three lines.
            if let value = defaults[property.name] { entry += ", defaultValue: {\n                    \(value)\n                }" }
            return entry + ")"
        }
        lines.append(entries.joined(separator: ",\n"))
        lines.append("        ]")
    }
    lines.append("    }")
    func member(_ declaration: String, _ body: String) {
        lines += ["", "    \(declaration) {", "        \(body)", "    }"]
    }
    switch shape {
    case .final:
        if let uniqueness { member("\(access)static var _$uniquenessConstraints: [[String]]", uniqueness) }
        if let globalUniqueness { member("\(access)static var _$globalUniquenessConstraints: [[String]]", globalUniqueness) }
        if let indexes { member("\(access)static var _$indexes: [PGModel.Schema.IndexMetadata]", indexes) }
    case .base:
        member("\(overridable)class var _$uniquenessConstraints: [[String]]", uniqueness ?? "[]")
        member("\(overridable)class var _$globalUniquenessConstraints: [[String]]", globalUniqueness ?? "[]")
        member("\(overridable)class var _$indexes: [PGModel.Schema.IndexMetadata]", indexes ?? "[]")
        member("\(overridable)class var _$superentity: (any PGModel.PersistentModel.Type)?", "nil")
    case .subclass(let superclass):
        member("\(overridable)override class var _$superentity: (any PGModel.PersistentModel.Type)?", "\(superclass).self")
        if let uniqueness { member("\(overridable)override class var _$uniquenessConstraints: [[String]]", "super._$uniquenessConstraints + \(uniqueness)") }
        if let globalUniqueness {
            member("\(overridable)override class var _$globalUniquenessConstraints: [[String]]", "super._$globalUniquenessConstraints + \(globalUniqueness)")
        }
        if let indexes { member("\(overridable)override class var _$indexes: [PGModel.Schema.IndexMetadata]", "super._$indexes + \(indexes)") }
    }
    return lines.joined(separator: "\n")
}
