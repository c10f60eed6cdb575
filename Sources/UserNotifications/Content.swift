import Foundation

/// What a notification says (Apple: `UNNotificationContent`): read-only; build one with
/// ``UNMutableNotificationContent``. A request keeps a copy of the content it was made with
/// (changing the mutable content afterwards changes nothing), as on iOS.
open class UNNotificationContent: NSObject, NSCopying, NSMutableCopying, @unchecked Sendable {
    // @unchecked: the fields are read and written only by the thread that holds the object;
    // a request takes an immutable copy (`UNNotificationRequest.init`), so the center, which
    // reads it from its own queue, never shares a mutable content with the app.

    struct Fields {
        var title = ""
        var subtitle = ""
        var body = ""
        var badge: NSNumber?
        var sound: UNNotificationSound?
        var launchImageName = ""
        var userInfo: [AnyHashable: Any] = [:]
        var attachments: [UNNotificationAttachment] = []
        var categoryIdentifier = ""
        var threadIdentifier = ""
        var targetContentIdentifier: String?
        var summaryArgument = ""
        var summaryArgumentCount = 0
        var interruptionLevel = UNNotificationInterruptionLevel.active
        var relevanceScore = 0.0
        var filterCriteria: String?
    }

    var fields: Fields

    /// Empty content.
    public override init() {
        fields = Fields()
        super.init()
    }

    init(fields: Fields) {
        self.fields = fields
        super.init()
    }

    /// The title.
    open var title: String { fields.title }
    /// The line under the title.
    open var subtitle: String { fields.subtitle }
    /// The message.
    open var body: String { fields.body }
    /// The number to put on the app's icon when the notification is delivered (`nil`: leave
    /// it; 0: remove it).
    open var badge: NSNumber? { fields.badge }
    /// The sound to play (`nil`: silent). Linux plays none.
    open var sound: UNNotificationSound? { fields.sound }
    /// The launch image's name.
    open var launchImageName: String { fields.launchImageName }
    /// The app's own values, handed back with the notification.
    open var userInfo: [AnyHashable: Any] { fields.userInfo }
    /// Files shown with the notification.
    open var attachments: [UNNotificationAttachment] { fields.attachments }
    /// The category (its actions), from ``UNUserNotificationCenter/setNotificationCategories(_:)``.
    open var categoryIdentifier: String { fields.categoryIdentifier }
    /// The thread notifications are grouped by.
    open var threadIdentifier: String { fields.threadIdentifier }
    /// Which window the notification brings forward.
    open var targetContentIdentifier: String? { fields.targetContentIdentifier }
    /// The text of a group's summary.
    open var summaryArgument: String { fields.summaryArgument }
    /// How many items the notification stands for in a group's summary.
    open var summaryArgumentCount: Int { fields.summaryArgumentCount }
    /// How urgently it interrupts.
    open var interruptionLevel: UNNotificationInterruptionLevel { fields.interruptionLevel }
    /// How it ranks in a summary (0...1).
    open var relevanceScore: Double { fields.relevanceScore }
    /// The Focus filter criteria.
    open var filterCriteria: String? { fields.filterCriteria }

    /// An immutable copy.
    open func copy(with zone: NSZone? = nil) -> Any { UNNotificationContent(fields: fields) }
    /// A mutable copy.
    open func mutableCopy(with zone: NSZone? = nil) -> Any { UNMutableNotificationContent(fields: fields) }

    /// The description (settable here; the request takes a copy).
    /// A description for logs, as Foundation describes objects.
    open override var description: String {
        "<UNNotificationContent: title: \(title), subtitle: \(subtitle), body: \(body), categoryIdentifier: \(categoryIdentifier), threadIdentifier: \(threadIdentifier), badge: \(badge.map { "\($0)" } ?? "(null)"), sound: \(sound.map { "\($0)" } ?? "(null)")>"
    }
}

/// Content an app builds (Apple: `UNMutableNotificationContent`).
open class UNMutableNotificationContent: UNNotificationContent, @unchecked Sendable {
    // @unchecked: as its superclass (the request copies it).

    /// Empty content.
    public override init() {
        super.init()
    }

    override init(fields: Fields) {
        super.init(fields: fields)
    }

    /// The title (settable here; the request takes a copy).
    open override var title: String { get { fields.title } set { fields.title = newValue } }
    /// The subtitle (settable here; the request takes a copy).
    open override var subtitle: String { get { fields.subtitle } set { fields.subtitle = newValue } }
    /// The body (settable here; the request takes a copy).
    open override var body: String { get { fields.body } set { fields.body = newValue } }
    /// The badge (settable here; the request takes a copy).
    open override var badge: NSNumber? { get { fields.badge } set { fields.badge = newValue } }
    /// The sound (settable here; the request takes a copy).
    open override var sound: UNNotificationSound? { get { fields.sound } set { fields.sound = newValue } }
    /// The launchImageName (settable here; the request takes a copy).
    open override var launchImageName: String { get { fields.launchImageName } set { fields.launchImageName = newValue } }
    /// The userInfo (settable here; the request takes a copy).
    open override var userInfo: [AnyHashable: Any] { get { fields.userInfo } set { fields.userInfo = newValue } }
    /// The attachments (settable here; the request takes a copy).
    open override var attachments: [UNNotificationAttachment] { get { fields.attachments } set { fields.attachments = newValue } }
    /// The categoryIdentifier (settable here; the request takes a copy).
    open override var categoryIdentifier: String { get { fields.categoryIdentifier } set { fields.categoryIdentifier = newValue } }
    /// The threadIdentifier (settable here; the request takes a copy).
    open override var threadIdentifier: String { get { fields.threadIdentifier } set { fields.threadIdentifier = newValue } }
    /// The targetContentIdentifier (settable here; the request takes a copy).
    open override var targetContentIdentifier: String? { get { fields.targetContentIdentifier } set { fields.targetContentIdentifier = newValue } }
    /// The summaryArgument (settable here; the request takes a copy).
    open override var summaryArgument: String { get { fields.summaryArgument } set { fields.summaryArgument = newValue } }
    /// The summaryArgumentCount (settable here; the request takes a copy).
    open override var summaryArgumentCount: Int { get { fields.summaryArgumentCount } set { fields.summaryArgumentCount = newValue } }
    /// The interruptionLevel (settable here; the request takes a copy).
    open override var interruptionLevel: UNNotificationInterruptionLevel { get { fields.interruptionLevel } set { fields.interruptionLevel = newValue } }
    /// The relevance (settable here; kept within 0...1 as Apple's is, a value that is not a
    /// number as 0).
    open override var relevanceScore: Double { get { fields.relevanceScore } set { fields.relevanceScore = newValue.isFinite ? min(1, max(0, newValue)) : 0 } }
    /// The filterCriteria (settable here; the request takes a copy).
    open override var filterCriteria: String? { get { fields.filterCriteria } set { fields.filterCriteria = newValue } }
}

/// The name of a sound file in the app's bundle (Apple: `UNNotificationSoundName`).
public struct UNNotificationSoundName: RawRepresentable, Hashable, Sendable {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    /// A sound by file name.
    public init(_ rawValue: String) { self.rawValue = rawValue }
}

/// The sound a notification plays (Apple: `UNNotificationSound`). Linux plays none: the
/// sound is kept with the notification and named in its line.
open class UNNotificationSound: NSObject, NSCopying, @unchecked Sendable {
    // @unchecked: immutable after init.

    /// The sound's file name; `nil` for the system's default sound.
    let name: UNNotificationSoundName?
    /// Whether it is a critical alert's sound.
    let isCritical: Bool
    /// A critical sound's volume (0...1).
    let volume: Float

    init(name: UNNotificationSoundName?, critical: Bool = false, volume: Float = 1) {
        self.name = name
        self.isCritical = critical
        // Within 0...1, as a critical alert's volume is; not a number: full.
        self.volume = volume.isFinite ? min(1, max(0, volume)) : 1
        super.init()
    }

    /// A sound from the app's bundle.
    public convenience init(named name: UNNotificationSoundName) {
        self.init(name: name)
    }

    /// The system's default sound.
    open class var `default`: UNNotificationSound { UNNotificationSound(name: nil) }
    /// The default sound of a critical alert.
    open class var defaultCritical: UNNotificationSound { UNNotificationSound(name: nil, critical: true) }
    /// The default ringtone.
    open class var defaultRingtone: UNNotificationSound { UNNotificationSound(name: UNNotificationSoundName("ringtone")) }
    /// A critical alert's sound from the app's bundle.
    open class func criticalSoundNamed(_ name: UNNotificationSoundName) -> UNNotificationSound {
        UNNotificationSound(name: name, critical: true)
    }
    /// A critical alert's sound from the app's bundle at `volume` (0...1).
    open class func criticalSoundNamed(_ name: UNNotificationSoundName, withAudioVolume volume: Float) -> UNNotificationSound {
        UNNotificationSound(name: name, critical: true, volume: volume)
    }
    /// The default critical sound at `volume` (0...1).
    open class func defaultCriticalSound(withAudioVolume volume: Float) -> UNNotificationSound {
        UNNotificationSound(name: nil, critical: true, volume: volume)
    }
    /// A ringtone from the app's bundle.
    open class func ringtoneSoundNamed(_ name: UNNotificationSoundName) -> UNNotificationSound {
        UNNotificationSound(name: name)
    }

    /// The same object: it is immutable.
    open func copy(with zone: NSZone? = nil) -> Any { self }

    /// The description (settable here; the request takes a copy).
    /// A description for logs, as Foundation describes objects.
    open override var description: String {
        "<UNNotificationSound: \(name?.rawValue ?? "default")\(isCritical ? ", critical" : "")>"
    }
}

/// `options` keys of ``UNNotificationAttachment/init(identifier:url:options:)`` (Apple's names and values).
public let UNNotificationAttachmentOptionsTypeHintKey = "UNNotificationAttachmentOptionsTypeHintKey"
/// Hide the attachment's thumbnail.
public let UNNotificationAttachmentOptionsThumbnailHiddenKey = "UNNotificationAttachmentOptionsThumbnailHiddenKey"
/// The part of the image shown as the thumbnail.
public let UNNotificationAttachmentOptionsThumbnailClippingRectKey = "UNNotificationAttachmentOptionsThumbnailClippingRectKey"
/// The frame of a movie shown as the thumbnail.
public let UNNotificationAttachmentOptionsThumbnailTimeKey = "UNNotificationAttachmentOptionsThumbnailTimeKey"

/// A file shown with a notification (Apple: `UNNotificationAttachment`): an image, a sound
/// or a movie. As on iOS, making one checks that the URL is a readable file of a type the
/// system shows, and throws otherwise.
open class UNNotificationAttachment: NSObject, @unchecked Sendable {
    // @unchecked: immutable after init.

    /// The app's identifier for it.
    public let identifier: String
    /// The file.
    public let url: URL
    /// Its uniform type identifier (`public.jpeg`, `public.png`, `public.mpeg-4`...).
    public let type: String

    /// The types iOS shows and their size limits (Apple's table: audio up to 5 MB, images
    /// 10 MB, movies 50 MB), by uniform type identifier.
    static let limits: [String: Int] = [
        "public.aiff-audio": 5_000_000, "com.microsoft.waveform-audio": 5_000_000,
        "public.mp3": 5_000_000, "public.mpeg-4-audio": 5_000_000,
        "public.jpeg": 10_000_000, "com.compuserve.gif": 10_000_000, "public.png": 10_000_000,
        "public.mpeg": 50_000_000, "public.mpeg-2-video": 50_000_000,
        "public.mpeg-4": 50_000_000, "public.avi": 50_000_000,
    ]

    /// Those types by file extension.
    static let typesByExtension: [String: String] = [
        "aif": "public.aiff-audio", "aiff": "public.aiff-audio", "wav": "com.microsoft.waveform-audio",
        "mp3": "public.mp3", "m4a": "public.mpeg-4-audio",
        "jpg": "public.jpeg", "jpeg": "public.jpeg", "gif": "com.compuserve.gif", "png": "public.png",
        "mpg": "public.mpeg", "mpeg": "public.mpeg", "m2v": "public.mpeg-2-video",
        "mp4": "public.mpeg-4", "avi": "public.avi",
    ]

    /// An attachment of the file at `url` (a `file:` URL of an image, sound or movie).
    /// `UNNotificationAttachmentOptionsTypeHintKey` names the type when the extension does
    /// not; it must be one of the types the system shows too.
    /// - Throws: ``UNError`` `.attachmentInvalidURL` when `url` is not a readable regular
    ///   file, `.attachmentUnrecognizedType` for a type the system does not show,
    ///   `.attachmentInvalidFileSize` above its type's limit.
    public init(identifier: String, url: URL, options: [AnyHashable: Any]? = nil) throws {
        guard url.isFileURL else {
            throw UNError(.attachmentInvalidURL, message: "attachment \"\(identifier)\": \(url) is not a file URL")
        }
        // Not opened: asking what the path is cannot block (a FIFO would).
        var status = stat()
        guard stat(url.path, &status) == 0 else {
            throw UNError(.attachmentInvalidURL, message: "attachment \"\(identifier)\": no file at \(url.path)")
        }
        guard status.st_mode & S_IFMT == S_IFREG else {
            throw UNError(.attachmentInvalidURL, message: "attachment \"\(identifier)\": \(url.path) is not a regular file")
        }
        guard access(url.path, R_OK) == 0 else {
            throw UNError(.attachmentInvalidURL, message: "attachment \"\(identifier)\": \(url.path) cannot be read")
        }
        let hint = options?[UNNotificationAttachmentOptionsTypeHintKey] as? String
        guard let type = hint ?? Self.typesByExtension[url.pathExtension.lowercased()], let limit = Self.limits[type] else {
            let named = hint.map { "type \"\($0)\"" } ?? url.lastPathComponent
            throw UNError(.attachmentUnrecognizedType, message: "attachment \"\(identifier)\": \(named) is not an image, sound or movie the system shows (JPEG, GIF, PNG; AIFF, WAV, MP3, MPEG-4 audio; MPEG, MPEG-2, MPEG-4, AVI)")
        }
        if Int(status.st_size) > limit {
            throw UNError(.attachmentInvalidFileSize, message: "attachment \"\(identifier)\": \(url.lastPathComponent) has \(status.st_size) bytes, more than the \(limit) its type may have")
        }
        self.identifier = identifier
        self.url = url
        self.type = type
        super.init()
    }
}

extension NSString {
    /// The string of `key` in the app's `Localizable.strings` (the key itself when it has
    /// none), formatted with `arguments` (Apple: `localizedUserNotificationString(forKey:arguments:)`,
    /// which localizes when the notification is shown; here it is at once, in the
    /// process's language).
    @_disfavoredOverload
    public class func localizedUserNotificationString(forKey key: String, arguments: [Any]?) -> String {
        let format = Bundle.main.localizedString(forKey: key, value: key, table: nil)
        guard let arguments, !arguments.isEmpty else { return format }
        let values: [any CVarArg] = arguments.map { argument in
            switch argument {
            case let value as Int: return value
            case let value as Double: return value
            case let value as String: return value as NSString
            case let value as NSNumber: return value.doubleValue
            default: return "\(argument)" as NSString
            }
        }
        return String(format: format, arguments: values)
    }
}
