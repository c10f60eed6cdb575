// A stored property added in an extension with associated objects, as a download library
// keeps its task on a request (the tenth outside probe; Apple's Foundation brings the
// Objective-C runtime's functions). Swift 6 mode, warnings as errors.
import Foundation
import Network
import Testing

final class DownloadRequest {
    let url: String
    init(url: String) { self.url = url }
}

final class DownloadJob {
    let name: String
    init(name: String) { self.name = name }
}

private enum AssociatedKeys {
    nonisolated(unsafe) static var job: UInt8 = 0
    nonisolated(unsafe) static var observer: UInt8 = 0
}

extension DownloadRequest {
    /// The job that downloads this request.
    var job: DownloadJob? {
        get { objc_getAssociatedObject(self, &AssociatedKeys.job) as? DownloadJob }
        set { objc_setAssociatedObject(self, &AssociatedKeys.job, newValue, .OBJC_ASSOCIATION_RETAIN_NONATOMIC) }
    }
    /// An observer held weakly (Apple: unretained).
    var observer: DownloadJob? {
        get { objc_getAssociatedObject(self, &AssociatedKeys.observer) as? DownloadJob }
        set { objc_setAssociatedObject(self, &AssociatedKeys.observer, newValue, .OBJC_ASSOCIATION_ASSIGN) }
    }
}

@Suite struct AssociatedObjectsTests {
    @Test func valuesAreKeptPerObjectAndKeyAndGoWithTheObject() {
        let request = DownloadRequest(url: "https://example.com/a")
        let other = DownloadRequest(url: "https://example.com/b")
        #expect(request.job == nil)
        request.job = DownloadJob(name: "a")
        #expect(request.job?.name == "a" && other.job == nil)
        weak var observed: DownloadJob?
        do {
            let observer = DownloadJob(name: "observer")
            observed = observer
            request.observer = observer
            #expect(request.observer === observer)
        }
        #expect(observed == nil && request.observer == nil, "assigned, not retained")
        weak var released: DownloadJob?
        do {
            let owner = DownloadRequest(url: "https://example.com/c")
            let job = DownloadJob(name: "c")
            released = job
            owner.job = job
        }
        // The owner went: its values are released at the table's next sweep (after 128
        // associations at most, while the table is small).
        for index in 0..<200 { DownloadRequest(url: "\(index)").job = nil; let temporary = DownloadRequest(url: "t\(index)"); temporary.job = DownloadJob(name: "t") }
        #expect(released == nil)
        request.job = nil
        #expect(request.job == nil)
        request.job = DownloadJob(name: "again")
        objc_removeAssociatedObjects(request)
        #expect(request.job == nil)
        // A value is not an object: nothing is associated with it.
        objc_setAssociatedObject(42, &AssociatedKeys.job, DownloadJob(name: "x"), .OBJC_ASSOCIATION_RETAIN)
        #expect(objc_getAssociatedObject(42, &AssociatedKeys.job) == nil)
    }
}
