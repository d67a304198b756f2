import FluxCore

/// A node's configuration that keeps the rules its core decides by (``DispatcherRules``,
/// ``StoreRules``, ``ViewRules``) and reads and writes their settings as its own:
/// `configuration.heartbeatMilliseconds = 50` sets the rules' value. Each setting is declared, with
/// its default and doc line, once: in the rules.
@dynamicMemberLookup
public protocol RulesConfiguration {
    associatedtype Rules
    /// The rules as configured; the configuration's `rules` adds what only its shell knows (a journal, a
    /// snapshot path, a pair).
    var settings: Rules { get set }
}

extension RulesConfiguration {
    /// A setting of the rules, read and written here.
    public subscript<Value>(dynamicMember keyPath: WritableKeyPath<Rules, Value>) -> Value {
        get { settings[keyPath: keyPath] }
        set { settings[keyPath: keyPath] = newValue }
    }

    /// A property of the rules that is read only.
    public subscript<Value>(dynamicMember keyPath: KeyPath<Rules, Value>) -> Value { settings[keyPath: keyPath] }
}

/// Rules that take config keys from the topology's values (``SettingValues``): the keys that no field of
/// the topology carries on the way, each read in the rules' own `read(_:)` (a new key of a one-of
/// table is read there, next to the field it sets). A node's `Configuration.init(topology:)` calls it.
package protocol ReadsSettings {
    mutating func read(_ values: SettingValues)
}

extension ReadsSettings {
    /// No key of the config's but those the topology's fields carry.
    package mutating func read(_ values: SettingValues) {}
}

extension DispatcherRules: ReadsSettings {}
extension StoreRules: ReadsSettings {}
extension ViewRules: ReadsSettings {}
