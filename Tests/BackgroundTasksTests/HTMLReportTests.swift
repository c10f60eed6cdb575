@testable import BackgroundTasksTesting
import Foundation
import Testing

/// 2024-01-01 00:00 UTC.
private let day0 = Date(timeIntervalSince1970: 1_704_067_200)

/// A run starting `offset` seconds after `day0` and lasting `duration` seconds.
private func run(_ offset: TimeInterval, _ duration: TimeInterval, _ outcome: String = "success", stop: String? = "completed") -> DeviceReport.Run {
    DeviceReport.Run(start: day0.addingTimeInterval(offset), end: day0.addingTimeInterval(offset + duration), outcome: outcome, stopReason: stop)
}

/// A task of `app` with `runs` and made-up resource figures.
private func task(_ app: String = "Feed", _ identifier: String = "com.example.feed.refresh", runs: [DeviceReport.Run], expirations: Int = 0, terminations: Int = 0) -> DeviceReport.Task {
    DeviceReport.Task(app: app, identifier: identifier, runs: runs, expirations: expirations, terminations: terminations, cpuSeconds: 12.25, joules: 3.5)
}

/// A one-day report with `tasks`, a few bands and launches.
private func deviceReport(tasks: [DeviceReport.Task], app: String = "Feed", notes: [String] = ["bgtask simulate --seed 7"], days: Double = 1) -> DeviceReport {
    DeviceReport(
        title: "Commuter day",
        scenario: "commuter",
        seed: 7,
        start: day0,
        end: day0.addingTimeInterval(days * 86_400),
        bands: [
            .init(kind: "charging", from: day0, to: day0.addingTimeInterval(6 * 3_600)),
            .init(kind: "network", from: day0, to: day0.addingTimeInterval(20 * 3_600)),
            .init(kind: "thermal", from: day0.addingTimeInterval(9 * 3_600), to: day0.addingTimeInterval(10 * 3_600), label: "serious"),
        ],
        launches: [
            .init(app: app, at: day0.addingTimeInterval(8 * 3_600), staleness: 720),
            .init(app: app, at: day0.addingTimeInterval(12 * 3_600), staleness: nil),
        ],
        tasks: tasks,
        wakeups: 48,
        notes: notes
    )
}

private func fleetReport(minutes: Int = 3 * 1_440) -> FleetReport {
    FleetReport(
        title: "Fleet of 1000",
        devices: 1_000,
        days: 3,
        mix: "commuter=0.5, office=0.5",
        seed: 42,
        runsPerMinute: (0..<minutes).map { ($0 * 7919) % 97 },
        markers: [.init(minute: 600, label: "every device regains the network"), .init(minute: 1_200, label: "push <burst>")],
        summary: [.init(name: "peak-to-mean", value: "4.2"), .init(name: "fresh launches", value: "87 %")],
        notes: []
    )
}

/// How many times `needle` occurs in `text`.
private func occurrences(of needle: String, in text: String) -> Int {
    text.components(separatedBy: needle).count - 1
}

@Suite("HTML report") struct HTMLReportTests {
    @Test func drawsOneBarPerRunWithItsTooltip() {
        let report = deviceReport(tasks: [
            task(runs: [run(3_600, 30), run(7_200, 600, "expired", stop: "expired"), run(9_000, 1, "crashed", stop: nil)]),
            task("Mail", "com.example.mail.sync", runs: [run(4_000, 45, "terminated"), run(50_000, 2, "interrupted")]),
        ])
        let page = HTMLReport.render(report)
        #expect(occurrences(of: "class=\"o-", in: page) == 5)
        #expect(page.contains("<title>2024-01-01 02:00:00, 10 min, expired, stop reason: expired</title>"))
        #expect(page.contains("<title>2024-01-01 02:30:00, 1 s, crashed</title>"))
        // A one-second run on a one-day chart is well under a pixel, but still drawn a pixel wide.
        #expect(page.contains("width=\"1.0\" height=\"12.0\" class=\"o-crashed\""))
    }

    @Test func showsHeaderLegendLaunchesAndBands() {
        let page = HTMLReport.render(deviceReport(tasks: [task("Feed", "com.example.newsreader.background.refresh", runs: [run(0, 10)])]))
        #expect(page.hasPrefix("<!DOCTYPE html>"))
        #expect(page.contains("<meta charset=\"utf-8\">"))
        #expect(page.contains("<title>Commuter day</title>"))
        #expect(page.contains("2024-01-01 00:00 – 2024-01-02 00:00 UTC"))
        #expect(page.contains("48 in total, 48.0 per day"))
        for outcome in ["success", "failure", "expired", "terminated", "crashed", "interrupted"] {
            #expect(page.contains("<span class=\"sw o-\(outcome)\"></span>\(outcome)</span>"))
        }
        #expect(page.contains("Feed opened 2024-01-01 08:00:00, data 12 min old"))
        #expect(page.contains("Feed opened 2024-01-01 12:00:00, never refreshed"))
        #expect(page.contains("class=\"t-serious\""))
        for kind in ["charging", "network", "metered", "low-power-mode", "in-use", "thermal"] {
            #expect(page.contains(">\(kind)</text>"))
        }
        // A one-day span gets hour ticks; the task label drops the reverse-DNS prefix.
        #expect(page.contains(">06:00</text>"))
        #expect(page.contains(">Feed: newsreader.background.refresh<title>"))
    }

    @Test func tableHasFiguresAndTotals() {
        // Durations 1...20 s: mean 10.5, p95 by nearest rank is the 19th, 19 s.
        let feed = task(runs: (1...20).map { run(Double($0) * 1_000, Double($0), $0 <= 17 ? "success" : "expired") }, expirations: 3)
        // Durations 1...100 s with the feed's: p95 over all 120 is the 114th smallest.
        let mail = task("Mail", "com.example.mail.sync", runs: (1...100).map { run(Double($0) * 500, Double($0)) }, terminations: 1)
        let page = HTMLReport.render(deviceReport(tasks: [feed, mail]))
        #expect(page.contains("<tr><td>Feed</td><td>com.example.feed.refresh</td><td class=\"n\">20</td><td class=\"n\">17</td><td class=\"n\">3</td><td class=\"n\">0</td><td class=\"n\">10.5</td><td class=\"n\">19.0</td><td class=\"n\">12.2</td><td class=\"n\">3.5</td></tr>"))
        #expect(page.contains("<td class=\"n\">50.5</td><td class=\"n\">95.0</td>"))
        let allDurations = ((1...20).map(Double.init) + (1...100).map(Double.init)).sorted()
        let expectedTotalP95 = Format.number(allDurations[113])
        #expect(page.contains("<tr class=\"total\"><td>Total</td><td></td><td class=\"n\">120</td><td class=\"n\">117</td><td class=\"n\">3</td><td class=\"n\">1</td>"))
        #expect(page.contains("<td class=\"n\">\(expectedTotalP95)</td><td class=\"n\">24.5</td><td class=\"n\">7.0</td></tr>"))
    }

    @Test func escapesHostileText() {
        let hostile = "<script>alert(1)</script>"
        let report = deviceReport(tasks: [task(hostile, "a\"b'c&d", runs: [run(0, 5, "success", stop: hostile)])], app: hostile, notes: [hostile])
        var titled = report
        titled.title = hostile
        let page = HTMLReport.render(titled)
        #expect(!page.contains("<script"))
        #expect(page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"))
        #expect(page.contains("a&quot;b&#39;c&amp;d"))
        var fleet = fleetReport()
        fleet.summary = [.init(name: hostile, value: "1")]
        let fleetPage = HTMLReport.render(fleet)
        #expect(!fleetPage.contains("<script"))
        #expect(fleetPage.contains("push &lt;burst&gt;"))
    }

    @Test func controlAndBidiCharactersAreShownNotObeyed() {
        // A right-to-left override in a title reversed the rest of the page's title.
        var report = deviceReport(tasks: [task(runs: [run(0, 5)])])
        report.title = "trip\u{202E}lmth.exe\u{0007}"
        let page = HTMLReport.render(report)
        #expect(!page.unicodeScalars.contains { [0x202E, 0x07].contains($0.value) })
        #expect(page.contains("trip\\u202Elmth.exe\\u0007"))
    }

    @Test func pagesAreSelfContained() {
        let quoting = deviceReport(tasks: [task(runs: [run(0, 5)])], notes: ["see https://example.com/run and http://x"])
        for page in [HTMLReport.render(quoting), HTMLReport.render(fleetReport())] {
            for forbidden in ["http://", "https://", "src=", "<link", "<script", "@import", "url("] {
                #expect(!page.contains(forbidden), "page contains \(forbidden)")
            }
        }
        // The quoted link still reads the same in a browser.
        #expect(HTMLReport.render(quoting).contains("see https:&#47;/example.com/run"))
    }

    @Test func renderingIsDeterministic() {
        let report = deviceReport(tasks: [task(runs: (0..<50).map { run(Double($0) * 1_500, 20) }), task("Mail", "sync", runs: [])])
        #expect(HTMLReport.render(report) == HTMLReport.render(report))
        #expect(HTMLReport.render(fleetReport()) == HTMLReport.render(fleetReport()))
    }

    @Test func aYearOfRunsMergesBarsAndStaysSmall() {
        let quarterHours = 365 * 96
        // Every 200th run fails, so merged success bars are broken up by single failures.
        let runs = (0..<quarterHours).map { run(Double($0) * 900, 25, $0 % 200 == 0 ? "failure" : "success") }
        let page = HTMLReport.render(deviceReport(tasks: [task(runs: runs)], days: 365))
        #expect(page.utf8.count < 2_000_000)
        let bars = occurrences(of: "class=\"o-", in: page)
        #expect(bars < 5_000)
        #expect(bars > 1_000)
        #expect(page.contains(" runs, success, "))
        #expect(page.contains("<td class=\"n\">\(quarterHours)</td>"))
        // A long span gets spaced day ticks and no hour ticks.
        #expect(!page.contains(">06:00</text>"))
    }

    @Test func sparseRowsAreNotMerged() {
        // 4,000 runs on a year's chart: under four per pixel of width, so each keeps its bar.
        let runs = (0..<4_000).map { run(Double($0) * 60, 10) }
        let page = HTMLReport.render(deviceReport(tasks: [task(runs: runs)], days: 365))
        #expect(occurrences(of: "class=\"o-", in: page) == 4_000)
    }

    @Test func emptyReportRenders() {
        let empty = DeviceReport(title: "", scenario: "", seed: 0, start: day0, end: day0, bands: [], launches: [], tasks: [], wakeups: 0, notes: [])
        let page = HTMLReport.render(empty)
        #expect(page.hasSuffix("</html>\n"))
        #expect(page.contains("0 in total"))
        #expect(occurrences(of: ">none</text>", in: page) == 2)
        let emptyFleet = FleetReport(title: "", devices: 0, days: 0, mix: "", seed: 0, runsPerMinute: [], markers: [], summary: [], notes: [])
        #expect(HTMLReport.render(emptyFleet).contains("no runs recorded"))
    }

    @Test func fleetChartDownsamplesToPeaks() throws {
        var series = [Int](repeating: 3, count: 100_000)
        series[54_321] = 999
        let (bucket, peaks) = LoadChart.downsample(series)
        #expect(bucket == 50)
        #expect(peaks.count == 2_000)
        #expect(peaks.max() == 999)
        var report = fleetReport()
        report.runsPerMinute = series
        let page = HTMLReport.render(report)
        let points = try #require(page.components(separatedBy: "<polyline points=\"").dropFirst().first?.prefix { $0 != "\"" })
        #expect(points.split(separator: " ").count <= 2_000)
        #expect(page.contains("max of a 50-minute bucket"))
        #expect(page.contains("days since start"))
        // The y axis reaches the peak in round steps: 0, 200, ... 1000.
        #expect(page.contains(">1000</text>"))
        #expect(page.contains(">800</text>"))
    }

    @Test func fleetPageHasMarkersAxesAndSummary() {
        let page = HTMLReport.render(fleetReport())
        #expect(page.contains(">every device regains the network<title>"))
        #expect(page.contains("<title>minute 600: every device regains the network</title>"))
        #expect(page.contains(">day 1</text>"))
        #expect(page.contains("<tr><td>fresh launches</td><td class=\"n\">87 %</td></tr>"))
        #expect(page.contains("<dt>Mix</dt><dd>commuter=0.5, office=0.5</dd>"))
        // A short series is drawn minute by minute, in hours.
        var short = fleetReport(minutes: 600)
        short.markers = []
        let shortPage = HTMLReport.render(short)
        #expect(shortPage.contains("hours since start"))
        #expect(shortPage.contains(">Runs started per minute across the fleet</text>"))
    }

    @Test func gridStepsAreRound() {
        #expect(Axis.gridStep(for: 0) == 1)
        #expect(Axis.gridStep(for: 7) == 2)
        #expect(Axis.gridStep(for: 100) == 20)
        #expect(Axis.gridStep(for: 101) == 25)
        #expect(Axis.gridStep(for: 999) == 200)
    }
}
