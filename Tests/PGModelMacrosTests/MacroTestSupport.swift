import PGModelMacros
import SwiftSyntaxMacroExpansion

/// The macros as the compiler sees them. `@Attribute` and `@Transient` are left out on purpose so the
/// snapshots show them in place; MarkerMacroTests expands them on their own.
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
        "            return _\(name)",
        "        }",
        "        set {",
        "            _$observationRegistrar.withMutation(of: self, keyPath: \\.\(name)) {",
        "                _\(name) = newValue",
        "            }",
        "            self._$didChange(\"\(name)\")",
        "        }",
        "    }",
        "",
        "    @Transient private var _\(name): \(type)",
    ]
    return lines.joined(separator: "\n")
}

/// The members `@Model` adds, in order, for a class with the given persisted properties
/// (name, type, `@Attribute` arguments or nil).
func generatedMembers(
    _ className: String,
    _ properties: [(name: String, type: String, attribute: String?)],
    access: String = "",
    uniqueness: String? = nil,
    indexes: String? = nil
) -> String {
    var lines = [
        "    @Transient \(access)var _$backingData = PGModel.ModelBackingData()",
        "",
        "    @Transient private let _$observationRegistrar = Observation.ObservationRegistrar()",
        "",
        "    \(access)required init(backingData: PGModel.ModelBackingData) throws {",
    ]
    for property in properties {
        lines.append("        self._\(property.name) = try backingData.value(forKey: \"\(property.name)\", codec: PGModel._AttributeCodecs.codec(\(property.type).self))")
    }
    lines += [
        "        self._$backingData = backingData",
        "    }",
        "",
        "    \(access)static var schemaMetadata: [PGModel.Schema.PropertyMetadata] {",
    ]
    if properties.isEmpty {
        lines.append("        []")
    } else {
        lines.append("        [")
        let entries = properties.map { property in
            var entry = "            PGModel.Schema.PropertyMetadata(name: \"\(property.name)\", keypath: \\\(className).\(property.name), codec: PGModel._AttributeCodecs.codec(\(property.type).self)"
            if let attribute = property.attribute { entry += ", metadata: PGModel.Schema.Attribute(\(attribute))" }
            return entry + ")"
        }
        lines.append(entries.joined(separator: ",\n"))
        lines.append("        ]")
    }
    lines.append("    }")
    if let uniqueness {
        lines += ["", "    \(access)static var _$uniquenessConstraints: [[String]] {", "        \(uniqueness)", "    }"]
    }
    if let indexes {
        lines += ["", "    \(access)static var _$indexes: [[String]] {", "        \(indexes)", "    }"]
    }
    return lines.joined(separator: "\n")
}
