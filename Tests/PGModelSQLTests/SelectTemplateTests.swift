import Foundation
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelSQL
import PGModelTestSupport
import Testing

/// Select templates: a fetch shape's SQL rendered once, then filled with each request's values.
/// Every case checks that the filled template is exactly what rendering the request gives.
@Suite("Select templates")
struct SelectTemplateTests {
    let renderer: SQLRenderer

    init() throws {
        renderer = try SQLRenderer(schema: GraphTestSchema.schema, schemaName: "app")
    }

    /// The template of `request`'s shape filled with its parameters, next to the plain render.
    func filled(_ request: FetchRequest) throws -> (template: SQLStatement?, rendered: SQLStatement) {
        let rendered = try renderer.select(request)
        guard let (shape, parameters) = request.selectParameters(), let template = try renderer.selectTemplate(shape) else {
            return (nil, rendered)
        }
        return (template.statement(parameters), rendered)
    }

    @Test func oneShapeServesEveryValue() throws {
        func point(_ name: String, limit: Int) -> FetchRequest {
            FetchRequest(entity: "Trip", predicate: .compare(.equal, .key("name"), .value(.string(name))), limit: limit)
        }
        let a = try #require(point("Paris", limit: 1).selectParameters())
        let b = try #require(point("Rome", limit: 3).selectParameters())
        #expect(a.shape == b.shape)
        #expect(a.parameters == [.int(1), .string("Paris")])
        #expect(b.parameters == [.int(3), .string("Rome")])
        for request in [point("Paris", limit: 1), point("Rome", limit: 3), point("", limit: 0)] {
            let (template, rendered) = try filled(request)
            #expect(template == rendered)
        }
    }

    @Test func shapesDifferInSortLimitPredicateAndProperties() throws {
        let base = FetchRequest(entity: "Trip", predicate: .compare(.equal, .key("name"), .value(.string("Paris"))))
        var sorted = base
        sorted.sort = [SortKey("destination")]
        var descending = base
        descending.sort = [SortKey("destination", ascending: false)]
        var limited = base
        limited.limit = 5
        var offset = base
        offset.offset = 5
        var otherKey = base
        otherKey.predicate = .compare(.equal, .key("destination"), .value(.string("Paris")))
        var otherOperator = base
        otherOperator.predicate = .compare(.notEqual, .key("name"), .value(.string("Paris")))
        var otherKind = base
        otherKind.predicate = .compare(.equal, .key("name"), .value(.int(3)))
        var nilCompare = base
        nilCompare.predicate = .compare(.equal, .key("name"), .value(.null))
        var partial = base
        partial.properties = ["name"]
        var subclass = base
        subclass.entity = "BusinessTrip"
        let requests = [base, sorted, descending, limited, offset, otherKey, otherOperator, otherKind, nilCompare, partial, subclass]
        let shapes = try requests.map { try #require($0.selectParameters()).shape }
        #expect(Set(shapes).count == requests.count)
    }

    @Test func templatesReproduceTheRenderOfManyShapes() throws {
        let requests: [FetchRequest] = [
            FetchRequest(entity: "Trip"),
            FetchRequest(entity: "Trip", sort: [SortKey("name")], limit: 10, offset: 20),
            // A subclass fetch filters on the `entity` column: its class names are constants of the shape.
            FetchRequest(entity: "BusinessTrip", predicate: .compare(.greaterOrEqual, .key("perdiem"), .value(.double(120.5)))),
            FetchRequest(entity: "Trip", predicate: .and([
                .compare(.greaterOrEqual, .key("name"), .value(.string("a"))),
                .compare(.less, .key("name"), .value(.string("a"))),   // equal values stay two binds
            ]), sort: [SortKey("name", ascending: false)]),
            FetchRequest(entity: "Trip", predicate: .in(.key("name"), [.string("x"), .null, .string("y")])),
            FetchRequest(entity: "Trip", predicate: .or([
                .compare(.equal, .key("destination"), .value(.null)),
                .string(.localizedStandardContains, .key("name"), .value(.string("pa"))),
                .not(.string(.startsWith, .key("destination"), .value(.string("R")))),
            ])),
            FetchRequest(entity: "Trip", predicate: .compare(.equal, .key("livingAccommodation.name"), .value(.string("Inn")))),
            FetchRequest(entity: "PersonalTrip", predicate: .conditional(
                .compare(.equal, .key("reason"), .value(.null)), .value(.bool(true)),
                .compare(.equal, .key("reason"), .value(.string("fun"))))),
            FetchRequest(entity: "BusinessTrip", predicate: .compare(.greater, .arithmetic(.multiply, .key("perdiem"), .value(.double(2))),
                                                                     .value(.double(100)))),
            FetchRequest(entity: "Trip", predicate: .compare(.equal, .key("name"), .value(.string("Paris"))), properties: ["name"]),
        ]
        for request in requests {
            let (template, rendered) = try filled(request)
            #expect(template == rendered, "\(rendered.sql)")
        }
    }

    @Test func requestsOutsideTheTemplatesAreRenderedEachTime() {
        let id = UUID()
        #expect(FetchRequest(entity: "Trip", identifiers: [id]).selectParameters() == nil)
        #expect(FetchRequest(entity: "LivingAccommodation", related: RelatedScope(entity: "Trip", relationship: "livingAccommodation", ids: [id]))
            .selectParameters() == nil)
        #expect(FetchRequest(entity: "Trip", sort: [SortKey("name")], after: FetchCursor(values: [.string("a")], id: id)).selectParameters() == nil)
        let aggregate = QueryExpression.aggregate(Aggregate(.count, relationship: "bucketList"))
        #expect(FetchRequest(entity: "Trip", predicate: .compare(.greater, aggregate, .value(.int(2)))).selectParameters() == nil)
    }

    @Test func aShapeTheRendererRejectsThrows() {
        let unknown = FetchRequest(entity: "Trip", predicate: .compare(.equal, .key("nope"), .value(.int(1))))
        #expect(throws: PGModelError.self) { _ = try renderer.selectTemplate(#require(unknown.selectParameters()).shape) }
    }
}
