@_exported import FluxCore

/// Generates a conformance to `WireEncodable` and `WireDecodable` (FluxCore) for a struct or an enum
/// that is `Codable` through synthesized conformances: `BinaryPayloadCodec` then writes and reads the
/// type's values without `Codable`, with the same bytes. Fields whose types have no conformance go
/// through `Codable` at their position.
///
/// ```swift
/// import FluxWire
///
/// @WireCodable
/// enum Action: Codable, Equatable, Sendable { case add(title: String), clear }
/// ```
///
/// The macro refuses (with an error) what synthesized `Codable` would not match: custom `CodingKeys`,
/// `init(from:)` or `encode(to:)`, generic types, classes, property wrappers and untyped properties whose
/// type it cannot tell from their initial value.
// The field types the extension reads (`__WireType0`…): 32 at most, which the macro checks.
@attached(
    member, names: named(__WireType0), named(__WireType1), named(__WireType2), named(__WireType3), named(__WireType4), named(__WireType5),
    named(__WireType6), named(__WireType7), named(__WireType8), named(__WireType9), named(__WireType10), named(__WireType11), named(__WireType12),
    named(__WireType13), named(__WireType14), named(__WireType15), named(__WireType16), named(__WireType17), named(__WireType18), named(__WireType19),
    named(__WireType20), named(__WireType21), named(__WireType22), named(__WireType23), named(__WireType24), named(__WireType25), named(__WireType26),
    named(__WireType27), named(__WireType28), named(__WireType29), named(__WireType30), named(__WireType31))
@attached(extension, conformances: WireEncodable, WireDecodable, names: named(wireEncode), named(init))
public macro WireCodable() = #externalMacro(module: "FluxMacros", type: "WireCodableMacro")
