import Foundation

// The text size the user chose and the transaction of a state change (Apple:
// `DynamicTypeSize`, `Transaction`), which apps set from launch arguments in the `App` that
// also registers their background tasks (a UI-test modifier that sets
// `\.dynamicTypeSize` and turns animations off, found by an outside compile probe). Nothing
// is drawn or animated here: the size is an environment value views read back, and a
// transaction's changes have nothing to animate.

/// The size of text the user chose (Apple: `DynamicTypeSize`, iOS 15), smallest first.
public enum DynamicTypeSize: Hashable, Comparable, CaseIterable, Sendable {
    case xSmall, small, medium, large, xLarge, xxLarge, xxxLarge
    case accessibility1, accessibility2, accessibility3, accessibility4, accessibility5

    /// Whether the size is one of the accessibility sizes.
    public var isAccessibilitySize: Bool { self >= .accessibility1 }
}

extension EnvironmentValues {
    /// The size of text (Apple: `\.dynamicTypeSize`): `.large`, the system's default,
    /// unless set.
    public var dynamicTypeSize: DynamicTypeSize {
        get { self[DynamicTypeSizeKey.self] }
        set { self[DynamicTypeSizeKey.self] = newValue }
    }
}

private struct DynamicTypeSizeKey: EnvironmentKey {
    static let defaultValue = DynamicTypeSize.large
}

nonisolated extension View {
    /// Sets the size of text inside (Apple: `dynamicTypeSize(_:)`).
    public func dynamicTypeSize(_ size: DynamicTypeSize) -> some View {
        environment(\.dynamicTypeSize, size)
    }

    /// Limits the size of text inside to `range` (Apple: `dynamicTypeSize(_:)` with a range):
    /// nothing is drawn, so the limit changes nothing here.
    public func dynamicTypeSize<T: RangeExpression>(_ range: T) -> Self where T.Bound == DynamicTypeSize { self }

    /// Changes the transaction of the view's state changes (Apple: `transaction(_:)`):
    /// nothing is animated here, so `transform` has nothing to change and is not called.
    public func transaction(_ transform: @escaping (inout Transaction) -> Void) -> Self { self }
}

/// The context of a state change (Apple: `Transaction`): its animation, and whether
/// animations are off. Nothing is animated here.
public struct Transaction: Sendable {
    /// The animation of the change.
    public var animation: Animation?
    /// Whether the views' own animations are off for the change.
    public var disablesAnimations = false
    /// Whether the change is part of a continuous one (a drag).
    public var isContinuous = false

    /// A transaction without an animation.
    public init() {}

    /// A transaction with `animation`.
    public init(animation: Animation?) { self.animation = animation }
}

/// Runs `body` at once in `transaction` (Apple: `withTransaction(_:_:)`): state changes take
/// effect, with no animation to show.
@discardableResult
public func withTransaction<Result>(_ transaction: Transaction, _ body: () throws -> Result) rethrows -> Result {
    try body()
}
