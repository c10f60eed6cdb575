// Coordinate spaces (Apple: `UICoordinateSpace`), for the scene delegate that makes its window
// in code (`UIWindow(frame: windowScene.coordinateSpace.bounds)`, Xcode's template without a
// storyboard, found by an outside compile probe in eight of ten such files). Nothing is laid
// out on Linux: a view's place is the frames the code gave, the screen's the nominal bounds.
import BackgroundTasks
import Foundation

/// A space of points (Apple: `UICoordinateSpace`): the screen's, or a view's.
@preconcurrency @MainActor
public protocol UICoordinateSpace: AnyObject {
    /// The space's rectangle in its own coordinates.
    var bounds: CGRect { get }
    /// `point` of this space in `coordinateSpace`.
    func convert(_ point: CGPoint, to coordinateSpace: any UICoordinateSpace) -> CGPoint
    /// `point` of `coordinateSpace` in this space.
    func convert(_ point: CGPoint, from coordinateSpace: any UICoordinateSpace) -> CGPoint
    /// `rect` of this space in `coordinateSpace`.
    func convert(_ rect: CGRect, to coordinateSpace: any UICoordinateSpace) -> CGRect
    /// `rect` of `coordinateSpace` in this space.
    func convert(_ rect: CGRect, from coordinateSpace: any UICoordinateSpace) -> CGRect
}

extension UICoordinateSpace {
    /// Where the space's origin is on the screen: a view's frames' origins summed up its
    /// superviews (a view outside any, from its own frame), the screen's at zero.
    var originOnScreen: CGPoint {
        guard let view = self as? UIView else { return .zero }
        var origin = CGPoint.zero
        for ancestor in sequence(first: view, next: \.superview) {
            origin.x += ancestor.frame.origin.x
            origin.y += ancestor.frame.origin.y
        }
        return origin
    }

    /// `point` of this space in `coordinateSpace`.
    public func convert(_ point: CGPoint, to coordinateSpace: any UICoordinateSpace) -> CGPoint {
        let from = originOnScreen, to = coordinateSpace.originOnScreen
        return CGPoint(x: point.x + from.x - to.x, y: point.y + from.y - to.y)
    }

    /// `point` of `coordinateSpace` in this space.
    public func convert(_ point: CGPoint, from coordinateSpace: any UICoordinateSpace) -> CGPoint {
        coordinateSpace.convert(point, to: self)
    }

    /// `rect` of this space in `coordinateSpace`.
    public func convert(_ rect: CGRect, to coordinateSpace: any UICoordinateSpace) -> CGRect {
        CGRect(origin: convert(rect.origin, to: coordinateSpace), size: rect.size)
    }

    /// `rect` of `coordinateSpace` in this space.
    public func convert(_ rect: CGRect, from coordinateSpace: any UICoordinateSpace) -> CGRect {
        coordinateSpace.convert(rect, to: self)
    }
}

extension UIScreen: UICoordinateSpace {
    /// The screen's own space (Apple: `coordinateSpace`).
    public var coordinateSpace: any UICoordinateSpace { self }
    /// The screen's fixed space (Apple: `fixedCoordinateSpace`): the same, as it never turns.
    public var fixedCoordinateSpace: any UICoordinateSpace { self }
}

extension UIView: UICoordinateSpace {
    /// `point` of this view in `view`'s space, or the screen's for `nil` (Apple's
    /// `convert(_:to:)` taking a view: `nil` is the window's, which fills the screen here).
    public func convert(_ point: CGPoint, to view: UIView?) -> CGPoint {
        convert(point, to: view.map { $0 as any UICoordinateSpace } ?? UIScreen.main)
    }

    /// `point` of `view`'s space (the screen's for `nil`) in this view's.
    public func convert(_ point: CGPoint, from view: UIView?) -> CGPoint {
        convert(point, from: view.map { $0 as any UICoordinateSpace } ?? UIScreen.main)
    }

    /// `rect` of this view in `view`'s space, or the screen's for `nil`.
    public func convert(_ rect: CGRect, to view: UIView?) -> CGRect {
        convert(rect, to: view.map { $0 as any UICoordinateSpace } ?? UIScreen.main)
    }

    /// `rect` of `view`'s space (the screen's for `nil`) in this view's.
    public func convert(_ rect: CGRect, from view: UIView?) -> CGRect {
        convert(rect, from: view.map { $0 as any UICoordinateSpace } ?? UIScreen.main)
    }
}

extension UIWindowScene {
    /// The scene's space (Apple: `coordinateSpace`): the screen's, as a scene fills it.
    public var coordinateSpace: any UICoordinateSpace { UIScreen.main }
    /// The scene's screen (Apple: `screen`).
    public var screen: UIScreen { UIScreen.main }
}
