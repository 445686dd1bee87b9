import PGModelCore

extension SQLRenderer {
    /// The SQL boolean expression for `expression` over `entity`'s table, with its binds numbered from `$1`.
    ///
    /// ```swift
    /// try renderer.renderPredicate(.compare(.equal, .key("destination"), .value(.string("Paris"))), entity: "Trip")
    /// // ("destination" = $1), binds [.string("Paris")]
    /// ```
    public func renderPredicate(_ expression: QueryExpression, entity: String) throws -> SQLStatement {
        var builder = SQLBuilder()
        builder.sql = try render(expression, in: try self.entity(entity), &builder)
        return builder.statement
    }

    func render(_ expression: QueryExpression, in entity: EntityDescription, _ b: inout SQLBuilder) throws -> String {
        switch expression {
        case .key(let name):
            return Naming.quoted(try attribute(name, of: entity).columnName)
        case .value(let value):
            return value.isNull ? "NULL" : b.bind(value)
        case .isKind, .aggregate:
            throw PGModelError(.unsupportedPredicate, "relationship and inheritance predicates are not rendered yet", model: entity.name)
        case .compare(let op, let lhs, let rhs):
            return try renderComparison(op, lhs, rhs, in: entity, &b)
        case .and(let operands):
            guard !operands.isEmpty else { return "TRUE" }
            return "(" + (try operands.map { try render($0, in: entity, &b) }).joined(separator: " AND ") + ")"
        case .or(let operands):
            guard !operands.isEmpty else { return "FALSE" }
            return "(" + (try operands.map { try render($0, in: entity, &b) }).joined(separator: " OR ") + ")"
        case .not(let operand):
            return "(NOT \(try render(operand, in: entity, &b)))"
        case .arithmetic(let op, let lhs, let rhs):
            let symbol: String
            switch op {
            case .add: symbol = "+"
            case .subtract: symbol = "-"
            case .multiply: symbol = "*"
            case .divide: symbol = "/"
            case .remainder: symbol = "%"
            }
            return "(\(try render(lhs, in: entity, &b)) \(symbol) \(try render(rhs, in: entity, &b)))"
        case .negate(let operand):
            return "(- \(try render(operand, in: entity, &b)))"
        case .conditional(let test, let then, let otherwise):
            return "(CASE WHEN \(try render(test, in: entity, &b)) THEN \(try render(then, in: entity, &b)) ELSE \(try render(otherwise, in: entity, &b)) END)"
        case .string(let op, let lhs, let rhs):
            let l = try render(lhs, in: entity, &b)
            let r = try render(rhs, in: entity, &b)
            switch op {
            case .contains:
                // strpos, not LIKE: the needle's % and _ are data, not wildcards.
                return "(strpos(\(l), \(r)) > 0)"
            case .startsWith:
                return "starts_with(\(l), \(r))"
            case .localizedStandardContains:
                return "(strpos(pgmodel.fold(\(l)), pgmodel.fold(\(r))) > 0)"
            case .caseInsensitiveCompare:
                return "(CASE WHEN lower(\(l)) COLLATE \"C\" < lower(\(r)) COLLATE \"C\" THEN -1 WHEN lower(\(l)) COLLATE \"C\" > lower(\(r)) COLLATE \"C\" THEN 1 ELSE 0 END)"
            }
        case .in(let needle, let values):
            guard values.count <= Self.maximumInListCount else {
                throw PGModelError(.unsupportedPredicate,
                    "a captured array of \(values.count) elements exceeds the \(Self.maximumInListCount) PGModel renders in `contains`", model: entity.name)
            }
            let present = values.filter { !$0.isNull }
            let hasNil = present.count != values.count
            let n = try render(needle, in: entity, &b)
            var parts: [String] = []
            if !present.isEmpty {
                // COALESCE: a NULL needle is simply not in the list, as in Swift; never NULL under NOT.
                parts.append("COALESCE(\(n) IN (\(present.map { b.bind($0) }.joined(separator: ", "))), FALSE)")
            }
            if hasNil { parts.append("(\(n) IS NULL)") }
            if parts.isEmpty { return "FALSE" }
            return parts.count == 1 ? parts[0] : "(" + parts.joined(separator: " OR ") + ")"
        case .coalesce(let lhs, let rhs):
            return "COALESCE(\(try render(lhs, in: entity, &b)), \(try render(rhs, in: entity, &b)))"
        }
    }

    private func renderComparison(_ op: ComparisonOperator, _ lhs: QueryExpression, _ rhs: QueryExpression,
                                  in entity: EntityDescription, _ b: inout SQLBuilder) throws -> String {
        if op == .equal || op == .notEqual {
            if case .value(.null) = rhs { return "(\(try render(lhs, in: entity, &b)) IS \(op == .equal ? "" : "NOT ")NULL)" }
            if case .value(.null) = lhs { return "(\(try render(rhs, in: entity, &b)) IS \(op == .equal ? "" : "NOT ")NULL)" }
            let l = try render(lhs, in: entity, &b)
            let r = try render(rhs, in: entity, &b)
            // Swift's == on optionals treats nil == nil as true and never yields "unknown";
            // IS [NOT] DISTINCT FROM is the SQL operator with exactly that meaning.
            if mayBeNull(lhs, in: entity) || mayBeNull(rhs, in: entity) {
                return "(\(l) IS \(op == .equal ? "NOT " : "")DISTINCT FROM \(r))"
            }
            return "(\(l) \(op == .equal ? "=" : "<>") \(r))"
        }
        let symbol: String
        switch op {
        case .less: symbol = "<"
        case .lessOrEqual: symbol = "<="
        case .greater: symbol = ">"
        case .greaterOrEqual: symbol = ">="
        case .equal, .notEqual: symbol = "="
        }
        return "(\(try render(lhs, in: entity, &b)) \(symbol) \(try render(rhs, in: entity, &b)))"
    }

    /// Whether `expression` can evaluate to SQL NULL: an optional attribute, or an expression over one.
    func mayBeNull(_ expression: QueryExpression, in entity: EntityDescription) -> Bool {
        switch expression {
        case .key(let name): return entity.attribute(named: name)?.isOptional ?? false
        case .value(let v): return v.isNull
        case .arithmetic(_, let l, let r), .string(_, let l, let r): return mayBeNull(l, in: entity) || mayBeNull(r, in: entity)
        case .negate(let e): return mayBeNull(e, in: entity)
        case .conditional(_, let t, let e): return mayBeNull(t, in: entity) || mayBeNull(e, in: entity)
        case .coalesce(_, let r): return mayBeNull(r, in: entity)
        case .compare, .and, .or, .not, .in, .isKind: return false
        case .aggregate(let a): return a.function == .min || a.function == .max
        }
    }
}
