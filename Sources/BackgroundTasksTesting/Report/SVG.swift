import Foundation
import SchedulerCore

/// Inline SVG written as text, for the report pages. Every text and tooltip passes through
/// ``Markup/escape(_:)`` here, so callers hand over report text as is.
struct SVG {
    /// The drawing's width in pixels.
    let width: Double
    /// The elements so far.
    private var body = ""

    /// An empty drawing `width` pixels wide.
    init(width: Double) {
        self.width = width
    }

    /// A rectangle of CSS class `css`, with a tooltip when `title` is given.
    mutating func rect(x: Double, y: Double, width: Double, height: Double, css: String, title: String? = nil) {
        body += "<rect x=\"\(Format.number(x))\" y=\"\(Format.number(y))\" width=\"\(Format.number(width))\" height=\"\(Format.number(height))\" class=\"\(css)\""
        close("rect", title: title)
    }

    /// A straight line of CSS class `css`.
    mutating func line(x1: Double, y1: Double, x2: Double, y2: Double, css: String, title: String? = nil) {
        body += "<line x1=\"\(Format.number(x1))\" y1=\"\(Format.number(y1))\" x2=\"\(Format.number(x2))\" y2=\"\(Format.number(y2))\" class=\"\(css)\""
        close("line", title: title)
    }

    /// `text` at (`x`, `y`), anchored `start`, `middle` or `end`.
    mutating func text(_ text: String, x: Double, y: Double, anchor: String = "start", css: String? = nil, title: String? = nil) {
        let style = css.map { " class=\"\($0)\"" } ?? ""
        let anchoring = anchor == "start" ? "" : " text-anchor=\"\(anchor)\""
        body += "<text x=\"\(Format.number(x))\" y=\"\(Format.number(y))\"\(anchoring)\(style)>\(Markup.escape(text))"
        if let title { body += "<title>\(Markup.escape(title))</title>" }
        body += "</text>"
    }

    /// A line through `points`, of CSS class `css`.
    mutating func polyline(_ points: [(x: Double, y: Double)], css: String) {
        let coordinates = points.map { "\(Format.number($0.x)),\(Format.number($0.y))" }.joined(separator: " ")
        body += "<polyline points=\"\(coordinates)\" class=\"\(css)\"/>"
    }

    /// The drawing as an `<svg>` element `height` pixels tall, described by `label` for screen readers.
    func element(height: Double, label: String) -> String {
        let w = Format.number(width, decimals: 0), h = Format.number(height, decimals: 0)
        return "<svg width=\"\(w)\" height=\"\(h)\" viewBox=\"0 0 \(w) \(h)\" role=\"img\" aria-label=\"\(Markup.escape(label))\">\(body)</svg>\n"
    }

    /// Ends an element, self-closing when it has no tooltip.
    private mutating func close(_ name: String, title: String?) {
        if let title {
            body += "><title>\(Markup.escape(title))</title></\(name)>"
        } else {
            body += "/>"
        }
    }
}

/// HTML escaping for text that comes from a report.
enum Markup {
    /// `text` safe in HTML text and in quoted attributes: `& < > " '` become entities, and the
    /// slash of `://` becomes `&#47;` so that not even a quoted link appears in the page as a
    /// URL (it still reads the same in a browser). Control and bidirectional-override
    /// characters are shown as `\uXXXX`, as the terminal shows them
    /// (``StandardStream/terminalSafe(_:)``): a scenario's name with a right-to-left override
    /// reversed the rest of the page's title.
    static func escape(_ text: String) -> String {
        let text = StandardStream.terminalSafe(text)
        // Most report text (times, numbers, identifiers) has nothing to escape.
        guard text.utf8.contains(where: { "&<>\"'/".utf8.contains($0) }) else { return text }
        var escaped = ""
        escaped.reserveCapacity(text.utf8.count + 16)
        var previous: Character = " "
        for character in text {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&#39;"
            case "/" where previous == ":": escaped += "&#47;"
            default: escaped.append(character)
            }
            previous = character
        }
        return escaped
    }
}

/// Fixed, locale-independent formatting, so that the same report always gives the same bytes.
enum Format {
    /// `format` filled in with no locale: C (POSIX) conventions, a point for decimals and no
    /// grouping, whatever the user's locale. Passing a POSIX `Locale` gives the same text but
    /// is some twenty times slower on Linux, which a page of thousands of bars notices.
    static func fixed(_ format: String, _ arguments: any CVarArg...) -> String {
        String(format: format, locale: nil, arguments: arguments)
    }

    /// `value` with `decimals` digits after the point (a dash when it is not finite).
    static func number(_ value: Double, decimals: Int = 1) -> String {
        guard value.isFinite else { return "–" }
        return fixed("%.\(decimals)f", value)
    }

    /// `date` in UTC as `yyyy-MM-dd HH:mm`, with `:ss` when `seconds` is set.
    static func date(_ date: Date, seconds: Bool = false) -> String {
        let parts = utc(date)
        let minutes = fixed("%04d-%02d-%02d %02d:%02d", parts.year, parts.month, parts.day, parts.hour, parts.minute)
        return seconds ? minutes + fixed(":%02d", parts.second) : minutes
    }

    /// `date`'s UTC calendar fields, computed without `Calendar` (no locale, no time zone).
    private static func utc(_ date: Date) -> (year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int) {
        let seconds = date.timeIntervalSince1970.rounded(.down)
        return GregorianDate.utc(secondsSince1970: seconds.isFinite ? Int64(max(min(seconds, 1e15), -1e15)) : 0)
    }

    /// `date` in UTC as `MM-dd`, for axis labels.
    static func day(_ date: Date) -> String {
        let parts = utc(date)
        return fixed("%02d-%02d", parts.month, parts.day)
    }

    /// `text` cut to `limit` characters, keeping its start.
    static func head(_ text: String, limit: Int) -> String {
        text.count <= limit ? text : String(text.prefix(max(limit - 1, 0))) + "…"
    }

    /// `identifier` cut to `limit` characters, keeping its end, where identifiers differ:
    /// whole leading reverse-DNS components go first (`com.example.feed.refresh` becomes
    /// `feed.refresh`), then characters.
    static func tail(_ identifier: String, limit: Int) -> String {
        var components = identifier.split(separator: ".", omittingEmptySubsequences: false)
        while components.count > 1, components.joined(separator: ".").count > limit {
            components.removeFirst()
        }
        let kept = components.joined(separator: ".")
        return kept.count <= limit ? kept : "…" + String(kept.suffix(max(limit - 1, 0)))
    }
}

/// Axis helpers shared by the charts.
enum Axis {
    /// The first of `candidates` (ascending units between ticks) whose ticks would be at least
    /// `spacing` pixels apart at `pixelsPerUnit`, or the last one; keeps labels from colliding
    /// whatever the span.
    static func step(_ candidates: [Int], pixelsPerUnit: Double, spacing: Double) -> Int {
        candidates.first { Double($0) * pixelsPerUnit >= spacing } ?? candidates[candidates.count - 1]
    }

    /// A round gridline step for values from 0 to `maximum`, with at most five steps up to
    /// the top: 1, 2, 2.5, 5 times a power of ten (only whole numbers, as counts are whole).
    static func gridStep(for maximum: Int) -> Int {
        var magnitude = 1
        while true {
            for tenths in [10, 20, 25, 50] where (magnitude * tenths) % 10 == 0 {
                let step = magnitude * tenths / 10
                if (maximum + step - 1) / step <= 5 { return step }
            }
            magnitude *= 10
        }
    }
}
