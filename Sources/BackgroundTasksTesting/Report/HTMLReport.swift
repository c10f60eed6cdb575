import Foundation
import SchedulerCore

/// Renders simulation reports as self-contained HTML pages: inline CSS and inline SVG, no
/// scripts, fonts or fetched resources, so a page opened from disk shows everything. The same
/// report always gives the same bytes, and every text from the report is escaped.
public enum HTMLReport {
    /// A device's energy log as an HTML page: the scenario and span, a timeline (condition
    /// bands, launch markers per app, run bars per task coloured by outcome) and a table of
    /// figures per task.
    public static func render(_ report: DeviceReport) -> String {
        var page = Page()
        page.heading(report.title, notes: report.notes)
        page.facts([
            ("Scenario", report.scenario),
            ("Seed", String(report.seed)),
            ("Simulated", spanText(report)),
            ("Wakeups", wakeupsText(report)),
        ])
        page.section("Timeline")
        page.insert(DeviceTimeline.svg(for: report))
        page.legend("Runs", Palette.outcomes.map { ($0.name, "o-\($0.name)") })
        page.legend("Thermal", Palette.thermalStates.map { ($0.name, "t-\($0.name)") })
        page.section("Tasks")
        let figures = report.tasks.map(TaskFigures.init)
        page.table(
            ["App", "Task", "Runs", "Succeeded", "Expired", "Terminated", "Mean (s)", "p95 (s)", "CPU (s)", "Energy (J)"],
            rows: zip(report.tasks, figures).map { task, figures in [task.app, task.identifier] + figures.cells },
            total: ["Total", ""] + TaskFigures(combining: figures).cells,
            textColumns: 2
        )
        return page.document(title: report.title)
    }

    /// A fleet report as an HTML page: the fleet and its mix, the runs per minute the fleet
    /// sends to a backend (with markers for shared events) and the summary table.
    public static func render(_ report: FleetReport) -> String {
        var page = Page()
        page.heading(report.title, notes: report.notes)
        page.facts([
            ("Devices", String(report.devices)),
            ("Days", String(report.days)),
            ("Mix", report.mix),
            ("Seed", String(report.seed)),
        ])
        page.section("Backend load")
        page.insert(LoadChart.svg(for: report))
        page.section("Summary")
        page.table(["Figure", "Value"], rows: report.summary.map { [$0.name, $0.value] }, total: nil, textColumns: 1)
        return page.document(title: report.title)
    }

    /// The policy against the two timers on one life (``BaselineComparison``) as an HTML
    /// page: the life, seeds and app, each scheduler's figures, and each goal with its bound
    /// and verdict, as `bgtask simulate --compare-baselines` prints them.
    public static func render(_ comparison: BaselineComparison) -> String {
        func row(_ name: String, _ figures: BaselineComparison.Figures) -> [String] {
            [name, figures.stalenessText(\.stalenessMedianMinutes, unit: ""), figures.stalenessText(\.stalenessP90Minutes, unit: ""),
             "\(figures.launchesWithoutContent) of \(figures.launches)", String(format: "%.1f", figures.wakeupsPerDay),
             String(format: "%.1f", figures.refreshesPerDay), String(format: "%.0f", figures.joulesPerDay)]
        }
        let title = "\(comparison.scenario): the policy against plain timers"
        var page = Page()
        page.heading(title, notes: [
            "staleness: the age of \(comparison.app)'s content when the user opened it, pooled over every seed's launches",
            "the timers obey only what the device forbids (required power, the network for refreshes, critical battery, Low Power Mode)",
        ])
        let seeds = comparison.seeds.count == 1 ? "\(comparison.seeds[0])" : "\(comparison.seeds.first ?? 0)-\(comparison.seeds.last ?? 0)"
        page.facts([("Life", comparison.scenario), ("Days", "\(comparison.days) per seed"), ("Seeds", seeds), ("App", comparison.app.rawValue)])
        page.section("Schedulers")
        page.table(
            ["Scheduler", "Median (min)", "p90 (min)", "No content yet", "Wakeups a day", "Refreshes a day", "Energy a day (J)"],
            rows: [
                row("policy", comparison.policy),
                row("timer, 15 min", comparison.timer15),
                row("timer, equal budget (every \(DurationText.spoken(comparison.equalBudgetInterval)))", comparison.equalBudgetTimer),
            ],
            total: nil, textColumns: 1)
        if let note = BaselineComparison.equalBudgetNote(policy: comparison.policy, equalBudgetTimer: comparison.equalBudgetTimer, interval: comparison.equalBudgetInterval) {
            page.paragraph("Note: " + note + ".")
        }
        page.section("Goals")
        let goals = comparison.goals
        let verdict = BaselineComparison.verdict
        page.table(
            ["Goal", "Policy", "Bound", "Verdict"],
            rows: [
                ["wakeups at most a quarter of the 15-minute timer's", String(format: "%.1f", comparison.policy.wakeupsPerDay),
                 String(format: "%.1f", comparison.timer15.wakeupsPerDay / 4), verdict(goals.wakeups)],
                ["median at most 1.25 x the 15-minute timer's", comparison.policy.stalenessText(\.stalenessMedianMinutes, unit: ""),
                 comparison.timer15.stalenessText(\.stalenessMedianMinutes, times: 1.25, unit: ""), verdict(goals.median, comparison.policy, comparison.timer15)],
                ["p90 no worse than the equal-budget timer's", comparison.policy.stalenessText(\.stalenessP90Minutes, unit: ""),
                 comparison.equalBudgetTimer.stalenessText(\.stalenessP90Minutes, unit: ""), verdict(goals.p90, comparison.policy, comparison.equalBudgetTimer)],
            ],
            total: nil, textColumns: 1)
        return page.document(title: title)
    }

    /// `2024-01-01 00:00 – 2024-01-08 00:00 UTC (7.0 d)`.
    static func spanText(_ report: DeviceReport) -> String {
        let length = report.end.timeIntervalSince(report.start)
        return "\(Format.date(report.start)) – \(Format.date(report.end)) UTC (\(DurationText.spoken(max(length, 0))))"
    }

    /// `1234 in total, 176.3 per day` (no rate for an empty span).
    static func wakeupsText(_ report: DeviceReport) -> String {
        let days = report.end.timeIntervalSince(report.start) / 86_400
        guard days > 0 else { return "\(report.wakeups) in total" }
        return "\(report.wakeups) in total, \(Format.number(Double(report.wakeups) / days)) per day"
    }
}

/// The colours of the pages, as CSS classes that fill SVG shapes and colour legend swatches
/// alike. Class names come from these fixed lists, never from report text.
enum Palette {
    /// Run outcomes, in legend order.
    static let outcomes: [(name: String, colour: String)] = [
        ("success", "#2e9e4f"), ("failure", "#b5736e"), ("expired", "#f28c28"),
        ("terminated", "#d62828"), ("crashed", "#8e44ad"), ("interrupted", "#9e9e9e"),
    ]
    /// Condition rows, in display order.
    static let bandKinds: [(name: String, colour: String)] = [
        ("charging", "#6fbf4a"), ("network", "#4a90d9"), ("metered", "#8e9fd6"),
        ("low-power-mode", "#c1a15a"), ("in-use", "#5fb8ad"), ("thermal", "#cfcfcf"),
    ]
    /// Thermal states worth a colour; others (nominal) use the thermal row's grey.
    static let thermalStates: [(name: String, colour: String)] = [
        ("fair", "#f4d03f"), ("serious", "#f39c12"), ("critical", "#e74c3c"),
    ]

    /// The class of a run bar: its outcome's, or a dark grey for outcomes the palette lacks.
    static func outcomeClass(_ outcome: String) -> String {
        outcomes.contains { $0.name == outcome } ? "o-\(outcome)" : "o-other"
    }

    /// The class of a band: thermal bands by state, others by kind.
    static func bandClass(kind: String, label: String) -> String {
        if kind == "thermal", thermalStates.contains(where: { $0.name == label }) { return "t-\(label)" }
        return bandKinds.contains { $0.name == kind } ? "b-\(kind)" : "b-other"
    }

    /// One rule per colour.
    static var css: String {
        let named = outcomes.map { ("o-\($0.name)", $0.colour) } + [("o-other", "#555")]
            + bandKinds.map { ("b-\($0.name)", $0.colour) } + [("b-other", "#bbb")]
            + thermalStates.map { ("t-\($0.name)", $0.colour) }
        return named.map { ".\($0.0){fill:\($0.1);background:\($0.1)}" }.joined()
    }
}

/// An HTML5 document assembled top to bottom. Text arguments are escaped here; only
/// ``insert(_:)`` takes markup.
struct Page {
    private var body = ""

    /// The shared style sheet: small, light, no web fonts.
    static let css = """
        body{font:14px/1.45 system-ui,sans-serif;color:#1d1d1f;background:#fff;margin:24px}\
        h1{font-size:22px;margin:0 0 6px}h2{font-size:16px;margin:24px 0 6px}\
        .notes{color:#555;margin:0 0 10px;padding-left:18px}\
        dl{display:grid;grid-template-columns:max-content auto;gap:2px 14px;margin:0}dt{color:#666}dd{margin:0}\
        table{border-collapse:collapse;font-variant-numeric:tabular-nums}\
        th,td{padding:3px 10px;border-bottom:1px solid #e3e3e3;text-align:left}th{background:#f5f5f7}\
        .n{text-align:right}tr.total td{font-weight:600;border-top:2px solid #999}\
        svg{max-width:100%;height:auto;font:11px system-ui,sans-serif}svg text{fill:#333}svg .muted{fill:#888}\
        .stripe{fill:rgba(0,0,0,.035)}.grid{stroke:#d8d8d8}.minor{stroke:#eee}.axis{stroke:#888}\
        .legend{margin:6px 0}.legend>span{margin-right:14px;white-space:nowrap}\
        .sw{display:inline-block;width:12px;height:12px;margin-right:5px;vertical-align:-1px;border-radius:2px}\
        .launch{fill:#1f3b73}.load{fill:none;stroke:#1f6fd1;stroke-width:1.2}.load-compare{fill:none;stroke:#9a9a9a;stroke-width:1;stroke-dasharray:3 2}\
        .marker{stroke:#c0392b;stroke-dasharray:4 3}svg .mark{fill:#c0392b}

        """

    /// The page's `<h1>` and its notes.
    mutating func heading(_ title: String, notes: [String]) {
        body += "<h1>\(Markup.escape(title))</h1>\n"
        guard !notes.isEmpty else { return }
        body += "<ul class=\"notes\">" + notes.map { "<li>\(Markup.escape($0))</li>" }.joined() + "</ul>\n"
    }

    /// Name–value pairs, in order.
    mutating func facts(_ facts: [(name: String, value: String)]) {
        body += "<dl>" + facts.map { "<dt>\(Markup.escape($0.name))</dt><dd>\(Markup.escape($0.value))</dd>" }.joined() + "</dl>\n"
    }

    /// A section heading.
    mutating func section(_ title: String) {
        body += "<h2>\(Markup.escape(title))</h2>\n"
    }

    /// A paragraph of text.
    mutating func paragraph(_ text: String) {
        body += "<p>\(Markup.escape(text))</p>\n"
    }

    /// Markup built elsewhere (an SVG chart, whose texts are already escaped).
    mutating func insert(_ markup: String) {
        body += markup
    }

    /// A line of colour swatches, each with its name.
    mutating func legend(_ title: String, _ entries: [(name: String, css: String)]) {
        let swatches = entries.map { "<span><span class=\"sw \($0.css)\"></span>\(Markup.escape($0.name))</span>" }
        body += "<p class=\"legend\"><b>\(Markup.escape(title)):</b> " + swatches.joined(separator: " ") + "</p>\n"
    }

    /// A table: the first `textColumns` columns left-aligned, the rest as right-aligned figures.
    mutating func table(_ headers: [String], rows: [[String]], total: [String]?, textColumns: Int) {
        func cells(_ values: [String], tag: String) -> String {
            values.enumerated().map { index, value in
                let figure = index >= textColumns ? " class=\"n\"" : ""
                return "<\(tag)\(figure)>\(Markup.escape(value))</\(tag)>"
            }.joined()
        }
        body += "<table>\n<thead><tr>\(cells(headers, tag: "th"))</tr></thead>\n<tbody>\n"
        body += rows.map { "<tr>\(cells($0, tag: "td"))</tr>\n" }.joined()
        if let total { body += "<tr class=\"total\">\(cells(total, tag: "td"))</tr>\n" }
        body += "</tbody>\n</table>\n"
    }

    /// The whole document.
    func document(title: String) -> String {
        """
        <!DOCTYPE html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>\(Markup.escape(title))</title>
        <style>
        \(Self.css)\(Palette.css)
        </style>
        </head>
        <body>
        \(body)</body>
        </html>

        """
    }
}

/// The figures of one row of the task table.
struct TaskFigures {
    /// Runs drawn.
    var runs = 0
    /// Runs that ended in success.
    var successes = 0
    /// Runs that expired, as the report counts them.
    var expirations = 0
    /// Runs that were terminated, as the report counts them.
    var terminations = 0
    /// Every run's duration in seconds, ascending.
    var durations: [Double] = []
    /// CPU seconds.
    var cpuSeconds = 0.0
    /// Estimated joules.
    var joules = 0.0

    /// The figures of `task`.
    init(_ task: DeviceReport.Task) {
        runs = task.runs.count
        successes = task.runs.count(where: { $0.outcome == "success" })
        expirations = task.expirations
        terminations = task.terminations
        durations = task.runs.map { max($0.end.timeIntervalSince($0.start), 0) }.sorted()
        cpuSeconds = task.cpuSeconds
        joules = task.joules
    }

    /// The total of `rows`; its mean and p95 are over all their runs.
    init(combining rows: [TaskFigures]) {
        for row in rows {
            runs += row.runs
            successes += row.successes
            expirations += row.expirations
            terminations += row.terminations
            durations += row.durations
            cpuSeconds += row.cpuSeconds
            joules += row.joules
        }
        durations.sort()
    }

    /// The mean duration, `nil` without runs.
    var mean: Double? {
        durations.isEmpty ? nil : durations.reduce(0, +) / Double(durations.count)
    }

    /// The 95th percentile duration by nearest rank (the smallest duration at least 95 % of
    /// runs do not exceed), `nil` without runs.
    var p95: Double? { EnergySummary.percentile(0.95, of: durations) }

    /// The table cells after app and task.
    var cells: [String] {
        [
            String(runs), String(successes), String(expirations), String(terminations),
            mean.map { Format.number($0) } ?? "–", p95.map { Format.number($0) } ?? "–",
            Format.number(cpuSeconds), Format.number(joules),
        ]
    }
}

/// The device timeline: a time axis over the simulated span, then a row per condition, per
/// app's launches and per task.
struct DeviceTimeline {
    static let gutter = 240.0
    static let plotWidth = 1_200.0
    static let rowHeight = 18.0
    static let sectionHeight = 22.0
    static let axisHeight = 36.0
    /// A task row with more runs than this per pixel of width merges runs (see ``bars(_:)``):
    /// past it, single bars would only overdraw each other and bloat the page.
    static let maxRunsPerPixel = 4

    /// Consecutive runs drawn as one bar.
    struct Bar {
        var start: Date
        var end: Date
        var first: DeviceReport.Run
        var count: Int
    }

    private let report: DeviceReport
    private let start: TimeInterval
    private let span: TimeInterval
    private var svg = SVG(width: gutter + plotWidth + 16)
    private var y = axisHeight

    /// The timeline of `report` as an `<svg>` element.
    static func svg(for report: DeviceReport) -> String {
        var timeline = DeviceTimeline(report)
        return timeline.draw()
    }

    private init(_ report: DeviceReport) {
        self.report = report
        start = report.start.timeIntervalSince1970
        // An empty or backwards span still draws (everything at the left edge) rather than dividing by zero.
        span = max(report.end.timeIntervalSince1970 - start, 1)
    }

    /// Where `date` falls, clamped to the chart.
    func x(_ date: Date) -> Double {
        let fraction = (date.timeIntervalSince1970 - start) / span
        return Self.gutter + min(max(fraction, 0), 1) * Self.plotWidth
    }

    /// Condition kinds: the fixed ones, then any others the report has, by name.
    private var bandKinds: [String] {
        let fixed = Palette.bandKinds.map(\.name)
        return fixed + Set(report.bands.map(\.kind)).subtracting(fixed).sorted()
    }

    private mutating func draw() -> String {
        let apps = Set(report.launches.map(\.app)).sorted()
        let kinds = bandKinds
        let rows = kinds.count + max(apps.count, 1) + max(report.tasks.count, 1)
        let height = Self.axisHeight + 3 * Self.sectionHeight + Double(rows) * Self.rowHeight + 6
        drawAxis(bottom: height - 6)
        section("Conditions")
        for kind in kinds { conditionRow(kind) }
        section("Launches")
        if apps.isEmpty { emptyRow() }
        for app in apps { launchRow(app) }
        section("Tasks")
        if report.tasks.isEmpty { emptyRow() }
        for task in report.tasks { taskRow(task) }
        return svg.element(height: height, label: "Timeline of conditions, launches and task runs")
    }

    /// Day ticks (spaced so labels do not collide), and hour ticks for spans of two days or less.
    private mutating func drawAxis(bottom: Double) {
        let end = start + span
        let dayStep = Axis.step([1, 2, 7, 14, 28, 56, 91], pixelsPerUnit: Self.plotWidth * 86_400 / span, spacing: 48)
        var day = Int((start / 86_400).rounded(.up))
        while Double(day) * 86_400 <= end {
            let date = Date(timeIntervalSince1970: Double(day) * 86_400)
            let x = x(date)
            svg.line(x1: x, y1: 16, x2: x, y2: bottom, css: "grid")
            if x + 36 <= svg.width { svg.text(Format.day(date), x: x + 3, y: 12) }
            day += dayStep
        }
        if span <= 2 * 86_400 { drawHours(bottom: bottom) }
        svg.line(x1: Self.gutter, y1: Self.axisHeight - 2, x2: Self.gutter + Self.plotWidth, y2: Self.axisHeight - 2, css: "axis")
    }

    private mutating func drawHours(bottom: Double) {
        let labelStep = Axis.step([1, 2, 3, 6, 12], pixelsPerUnit: Self.plotWidth * 3_600 / span, spacing: 36)
        var hour = Int((start / 3_600).rounded(.up))
        while Double(hour) * 3_600 <= start + span {
            // Midnight already has its day line and label.
            if hour % 24 != 0 {
                let x = x(Date(timeIntervalSince1970: Double(hour) * 3_600))
                svg.line(x1: x, y1: 20, x2: x, y2: bottom, css: "minor")
                if hour % labelStep == 0 {
                    svg.text(Format.fixed("%02d:00", hour % 24), x: x, y: 28, anchor: "middle", css: "muted")
                }
            }
            hour += 1
        }
    }

    private mutating func section(_ title: String) {
        svg.text(title, x: 8, y: y + 15, css: "muted")
        y += Self.sectionHeight
    }

    /// Starts a row: its label in the gutter and a faint stripe across the chart.
    private mutating func beginRow(_ label: String, title: String? = nil) {
        svg.text(label, x: Self.gutter - 8, y: y + 13, anchor: "end", title: title)
        svg.rect(x: Self.gutter, y: y + 1, width: Self.plotWidth, height: Self.rowHeight - 2, css: "stripe")
    }

    private mutating func emptyRow() {
        svg.text("none", x: Self.gutter + 6, y: y + 13, css: "muted")
        y += Self.rowHeight
    }

    private mutating func conditionRow(_ kind: String) {
        beginRow(kind)
        for band in report.bands where band.kind == kind {
            let from = x(band.from), to = x(band.to)
            let name = band.label.isEmpty ? kind : "\(kind) \(band.label)"
            let title = "\(name), \(Format.date(band.from)) – \(Format.date(band.to)) (\(DurationText.spoken(max(band.to.timeIntervalSince(band.from), 0))))"
            svg.rect(x: from, y: y + 3, width: max(to - from, 1), height: Self.rowHeight - 6, css: Palette.bandClass(kind: kind, label: band.label), title: title)
        }
        y += Self.rowHeight
    }

    private mutating func launchRow(_ app: String) {
        beginRow(Format.head(app, limit: 34), title: "\(app) launches")
        for launch in report.launches where launch.app == app {
            let staleness = launch.staleness.map { "data \(DurationText.spoken($0)) old" } ?? "never refreshed"
            let title = "\(app) opened \(Format.date(launch.at, seconds: true)), \(staleness)"
            svg.rect(x: x(launch.at) - 0.75, y: y + 2, width: 1.5, height: Self.rowHeight - 4, css: "launch", title: title)
        }
        y += Self.rowHeight
    }

    private mutating func taskRow(_ task: DeviceReport.Task) {
        let app = Format.head(task.app, limit: 14)
        let label = "\(app): \(Format.tail(task.identifier, limit: max(36 - app.count - 2, 8)))"
        beginRow(label, title: "\(task.app): \(task.identifier), \(task.runs.count) runs")
        // Successes first, so that in a dense row the rarer failures are drawn on top of them.
        let bars = bars(task.runs)
        for bar in bars.filter({ $0.first.outcome == "success" }) + bars.filter({ $0.first.outcome != "success" }) {
            let from = x(bar.start), to = x(bar.end)
            svg.rect(x: from, y: y + 3, width: max(to - from, 1), height: Self.rowHeight - 6, css: Palette.outcomeClass(bar.first.outcome), title: tooltip(bar))
        }
        y += Self.rowHeight
    }

    /// One bar per run; but when the row holds more than ``maxRunsPerPixel`` runs per pixel,
    /// runs of one outcome that follow each other and start in the same pixel become one bar.
    func bars(_ runs: [DeviceReport.Run]) -> [Bar] {
        let merge = runs.count > Self.maxRunsPerPixel * Int(Self.plotWidth)
        var bars: [Bar] = []
        var barPixel = Int.min
        for run in runs {
            let pixel = Int(x(run.start).rounded(.down))
            if merge, let last = bars.last, last.first.outcome == run.outcome, pixel == barPixel {
                bars[bars.count - 1].end = max(last.end, run.end)
                bars[bars.count - 1].count += 1
            } else {
                bars.append(Bar(start: run.start, end: run.end, first: run, count: 1))
                barPixel = pixel
            }
        }
        return bars
    }

    /// A run's start, duration, outcome and stop reason; for merged runs, how many and when.
    private func tooltip(_ bar: Bar) -> String {
        let run = bar.first
        guard bar.count == 1 else {
            return "\(bar.count) runs, \(run.outcome), \(Format.date(bar.start)) – \(Format.date(bar.end))"
        }
        let duration = DurationText.spoken(max(run.end.timeIntervalSince(run.start), 0))
        let reason = run.stopReason.map { ", stop reason: \($0)" } ?? ""
        return "\(Format.date(run.start, seconds: true)), \(duration), \(run.outcome)\(reason)"
    }
}

/// The fleet's load chart: runs per minute over the simulation, y gridlines from zero to the
/// peak, time ticks, and a dashed line per marker.
struct LoadChart {
    static let gutter = 56.0
    static let plotWidth = 1_200.0
    static let plotTop = 84.0
    static let plotHeight = 260.0
    /// More points than this adds bytes but nothing a reader can see at this width.
    static let maxPoints = 2_000

    private let report: FleetReport
    private let minutes: Int
    private var svg = SVG(width: gutter + plotWidth + 24)
    private var plotBottom: Double { Self.plotTop + Self.plotHeight }

    /// The chart of `report` as an `<svg>` element.
    static func svg(for report: FleetReport) -> String {
        var chart = LoadChart(report)
        return chart.draw()
    }

    private init(_ report: FleetReport) {
        self.report = report
        minutes = max(report.runsPerMinute.count, 1)
    }

    /// `series` cut into equal buckets, at most `maxPoints` of them, each the peak of its
    /// minutes: the max keeps a stampede's spike that an average would flatten.
    static func downsample(_ series: [Int], maxPoints: Int = maxPoints) -> (bucket: Int, peaks: [Int]) {
        let bucket = max(1, (series.count + maxPoints - 1) / max(maxPoints, 1))
        let peaks = stride(from: 0, to: series.count, by: bucket).map { series[$0..<min($0 + bucket, series.count)].max() ?? 0 }
        return (bucket, peaks)
    }

    /// Where minute `minute` falls, clamped to the chart.
    private func x(_ minute: Double) -> Double {
        Self.gutter + min(max(minute / Double(minutes), 0), 1) * Self.plotWidth
    }

    private mutating func draw() -> String {
        let (bucket, peaks) = Self.downsample(report.runsPerMinute)
        let comparison = report.comparison.map { Self.downsample($0.runsPerMinute).peaks } ?? []
        let peak = max(peaks.max() ?? 0, comparison.max() ?? 0)
        let step = Axis.gridStep(for: peak)
        let top = max((peak + step - 1) / step, 1) * step
        let y = { (value: Int) in Self.plotTop + Self.plotHeight * (1 - Double(value) / Double(top)) }
        let what = bucket == 1 ? "Runs started per minute across the fleet" : "Runs started per minute across the fleet (each point the max of a \(bucket)-minute bucket)"
        svg.text(what, x: Self.gutter, y: 14)
        for value in stride(from: 0, through: top, by: step) {
            svg.line(x1: Self.gutter, y1: y(value), x2: Self.gutter + Self.plotWidth, y2: y(value), css: value == 0 ? "axis" : "grid")
            svg.text(String(value), x: Self.gutter - 6, y: y(value) + 4, anchor: "end", css: "muted")
        }
        drawTimeAxis()
        let points = peaks.enumerated().map { index, peak in
            // Each point sits mid-bucket; the last bucket may be short.
            let first = index * bucket
            return (x: x(Double(first) + Double(min(bucket, report.runsPerMinute.count - first)) / 2), y: y(peak))
        }
        if let other = report.comparison, !comparison.isEmpty {
            // The comparison goes underneath, in grey, so the main series stays on top.
            let otherPoints = comparison.enumerated().map { index, peak in
                let first = index * bucket
                return (x: x(Double(first) + Double(min(bucket, other.runsPerMinute.count - first)) / 2), y: y(peak))
            }
            svg.polyline(otherPoints, css: "load-compare")
            svg.line(x1: Self.gutter + Self.plotWidth - 300, y1: 10, x2: Self.gutter + Self.plotWidth - 280, y2: 10, css: "load")
            svg.text(other.label, x: Self.gutter + Self.plotWidth - 276, y: 14)
            svg.line(x1: Self.gutter + Self.plotWidth - 300, y1: 26, x2: Self.gutter + Self.plotWidth - 280, y2: 26, css: "load-compare")
            svg.text(other.comparisonLabel, x: Self.gutter + Self.plotWidth - 276, y: 30)
        }
        if points.isEmpty {
            svg.text("no runs recorded", x: Self.gutter + Self.plotWidth / 2, y: Self.plotTop + Self.plotHeight / 2, anchor: "middle", css: "muted")
        } else {
            svg.polyline(points, css: "load")
        }
        drawMarkers()
        return svg.element(height: plotBottom + 46, label: what)
    }

    /// Ticks in hours, or in days past two days.
    private mutating func drawTimeAxis() {
        let inHours = minutes <= 2 * 1_440
        let unit = inHours ? 60 : 1_440
        let candidates = inHours ? [1, 2, 3, 4, 6, 12, 24] : [1, 2, 7, 14, 30, 61, 91, 182, 365]
        let step = Axis.step(candidates, pixelsPerUnit: Self.plotWidth * Double(unit) / Double(minutes), spacing: 56)
        for count in stride(from: 0, through: minutes / unit, by: step) {
            let x = x(Double(count * unit))
            svg.line(x1: x, y1: plotBottom, x2: x, y2: plotBottom + 5, css: "axis")
            svg.text(inHours ? "\(count) h" : "day \(count)", x: x, y: plotBottom + 18, anchor: "middle", css: "muted")
        }
        svg.text(inHours ? "hours since start" : "days since start", x: Self.gutter + Self.plotWidth / 2, y: plotBottom + 38, anchor: "middle")
    }

    /// A dashed line per marker; labels take three staggered lines above the plot so close
    /// markers stay legible, and sit left of their line near the right edge.
    private mutating func drawMarkers() {
        for (index, marker) in report.markers.enumerated() {
            let x = x(Double(marker.minute))
            let labelY = 32 + Double(index % 3) * 16
            let title = "minute \(marker.minute): \(marker.label)"
            svg.line(x1: x, y1: labelY + 4, x2: x, y2: plotBottom, css: "marker", title: title)
            let nearRightEdge = x > Self.gutter + Self.plotWidth * 0.7
            svg.text(marker.label, x: nearRightEdge ? x - 4 : x + 4, y: labelY, anchor: nearRightEdge ? "end" : "start", css: "mark", title: title)
        }
    }
}
