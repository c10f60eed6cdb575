@testable import BackgroundTasksTesting
import BackgroundTasks
import Foundation
import SchedulerCore
import Testing

/// Many modelled devices: the mix and outage options, the limits, and what the aggregate
/// says (kept to a few hundred device-days so the suite stays fast in debug builds).
@Suite("Fleet") struct FleetTests {
    /// A fleet of the standard mix that reads nothing from this machine's environment.
    static func fleet(devices: Int, days: Int = 1, outage: Fleet.SharedOutage? = nil, herdSpreading: Bool = true) throws -> Fleet {
        var policies = PolicySet()
        if !herdSpreading { policies.configuration.herdSpreadWindow = 0 }
        return try Fleet(devices: devices, days: days, sharedOutage: outage, configuration: .simulation(environment: [:]), policies: policies)
    }

    // MARK: --mix

    @Test func aMixReadsBuiltInNamesAndPositiveWeights() throws {
        let mix = try Fleet.Mix.parse("commuter=0.5, office = 1.5")
        #expect(mix.entries.map(\.scenario.name) == ["commuter", "office"])
        #expect(mix.entries.map(\.weight) == [0.5, 1.5])
        #expect(mix.entries.first?.scenario == Scenario.builtIn(named: "commuter"))
        #expect(mix.description == "commuter=0.5,office=1.5")
        #expect(Fleet.Mix.standard.description == "commuter=0.4,office=0.3,night-charger=0.2,travel=0.1")
    }

    @Test(arguments: [
        ("commuter=0.5,moon=0.5", "unknown scenario 'moon'"),
        ("commuter=0", "found 'commuter=0'"),
        ("commuter=-1", "found 'commuter=-1'"),
        ("commuter=x", "found 'commuter=x'"),
        ("commuter=nan", "found 'commuter=nan'"),
        ("commuter=inf", "found 'commuter=inf'"),
        ("commuter", "found 'commuter'"),
        ("commuter=0.5,commuter=0.5", "scenario 'commuter' is listed twice"),
        ("commuter=0.5,,office=0.5", "found ''"),
        ("commuter=1,", "found ''"),
        ("", "found ''"),
    ])
    func aBadMixIsRefusedNamingTheCulprit(text: String, culprit: String) throws {
        let error = try #require(throws: FleetError.self) { _ = try Fleet.Mix.parse(text) }
        #expect(error.message.hasPrefix("--mix: "), "\(error.message)")
        #expect(error.message.contains(culprit), "\(error.message)")
    }

    @Test func anUnknownScenarioErrorListsTheBuiltIns() throws {
        let error = try #require(throws: FleetError.self) { _ = try Fleet.Mix.parse("moon=1") }
        for name in Scenario.builtInNames { #expect(error.message.contains(name)) }
    }

    @Test func everyDeviceDrawsItsScenarioFromTheMixByWeight() throws {
        let mix = try Fleet.Mix.parse("commuter=3,office=1")
        let draws = (0..<2_000).map { mix.scenario(forDevice: $0, seed: 7).name }
        let commuters = draws.filter { $0 == "commuter" }.count
        #expect(draws.allSatisfy { $0 == "commuter" || $0 == "office" })
        #expect((1_350...1_650).contains(commuters), "\(commuters) of 2000 devices are commuters, expected about 1500")
        // The same seed, the same draw.
        #expect((0..<2_000).map { mix.scenario(forDevice: $0, seed: 7).name } == draws)
    }

    // MARK: --mix with scenario files

    /// A team's own lives join the mix as files: named by their file, pasted back as given,
    /// and a file holding a built-in's JSON plays the same fleet as the built-in's name.
    @Test func aMixTakesScenarioFilesBesideBuiltIns() throws {
        let directory = try SimulationCommandTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let commuter = try SimulationCommandTests.write(try #require(Scenario.builtInJSON(named: "commuter")), to: "my=commuter.json", in: directory)
        let mix = try Fleet.Mix.parse("\(commuter)=2, office=1")
        #expect(mix.entries.map(\.file) == [commuter, nil], "a path holding '=' reads up to the last one")
        #expect(mix.entries.first?.scenario == Scenario.builtIn(named: "commuter"))
        #expect(mix.description == "\(commuter)=2,office=1")
        #expect(try Fleet.Mix.parse(mix.description) == mix, "the description reads back")

        func played(_ mix: Fleet.Mix) throws -> FleetResult {
            try Fleet(devices: 12, days: 1, mix: mix, configuration: .simulation(environment: [:])).run()
        }
        let fromFile = try played(Fleet.Mix.parse("\(commuter)=1"))
        let builtIn = try played(Fleet.Mix.parse("commuter=1"))
        #expect(fromFile.runsPerMinute == builtIn.runsPerMinute)
        #expect(fromFile.launches == builtIn.launches && fromFile.freshLaunches == builtIn.freshLaunches)
        #expect(fromFile.wakeups == builtIn.wakeups && fromFile.joules == builtIn.joules)
        #expect(fromFile.launches > 0)
    }

    @Test func aScenarioFileInTheMixIsCheckedNamingTheFileAndTheCulprit() throws {
        let directory = try SimulationCommandTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let broken = try SimulationCommandTests.write(#"{"version": 1, "name": "broken", "days": [{"network": [{"from": "09:00", "to": "08:00"}]}]}"#, to: "broken.json", in: directory)
        let other = try SimulationCommandTests.write(#"{"version": 1, "name": "other", "days": [{"launches": [{"at": "08:00", "app": "com.example.feedreadr"}]}]}"#, to: "other-app.json", in: directory)
        let missing = directory.appendingPathComponent("missing.json").path

        func refusal(_ text: String) throws -> String {
            try #require(throws: FleetError.self) { _ = try Fleet(devices: 1, days: 1, mix: Fleet.Mix.parse(text)) }.message
        }
        let unreadable = try refusal("\(missing)=1")
        #expect(unreadable.hasPrefix("--mix: \(missing): $: "), "\(unreadable)")
        #expect(unreadable.contains("found nothing"), "\(unreadable)")
        let invalid = try refusal("commuter=1,\(broken)=1")
        #expect(invalid.hasPrefix("--mix: \(broken): $.days[0].network[0]"), "\(invalid)")
        // A launch for an app the fleet does not run would silently open nothing.
        let typo = try refusal("\(other)=1")
        #expect(typo.hasPrefix("--mix: \(other): $.days[0].launches[0].app: "), "\(typo)")
        #expect(typo.contains("com.example.feedreadr"), "\(typo)")
        // The same file twice, however spelled: through ./ or through a link to it.
        let twice = try refusal("\(other)=1,\(directory.path)/./other-app.json=2")
        #expect(twice.contains("is listed twice"), "\(twice)")
        try FileManager.default.createSymbolicLink(atPath: directory.path + "/link.json", withDestinationPath: other)
        #expect(try refusal("\(other)=1,\(directory.path)/link.json=2").contains("is listed twice"))
        // A path ending in / names a directory, not the file without the slash.
        let slash = try refusal("\(other)/=1")
        #expect(slash.contains("a path ending in /, which names a directory"), "\(slash)")
        // A name that is neither a built-in nor a file says both are possible.
        let unknown = try refusal("moon=1")
        #expect(unknown.contains("or a scenario file"), "\(unknown)")
    }

    /// A scenario file may be far denser than any built-in, which the device-days do not
    /// see: a device's events are bounded (what it keeps grows with them), and so is the
    /// fleet's work, counted for the mix's average device; every built-in fleet the
    /// device-days allow stays allowed.
    @Test func denseScenarioFilesAreBoundedByTheirEvents() throws {
        let directory = try SimulationCommandTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // A launch every minute, online all day: 2,882 events a day.
        let launches = (0..<1_440).map { #"{"at": "\#(Scenario.clock($0))", "minutes": 0.5}"# }.joined(separator: ",")
        let dense = try SimulationCommandTests.write(#"{"version": 1, "name": "dense", "days": [{"network": [{"from": "00:00", "to": "24:00"}], "launches": [\#(launches)]}]}"#, to: "dense.json", in: directory)
        let mix = try Fleet.Mix.parse("\(dense)=1")
        let perDevice = try #require(throws: FleetError.self) { _ = try Fleet(devices: 1, days: 100, mix: mix) }.message
        #expect(perDevice.contains("--days 100 plays 288200 scenario events on a device living \(dense), more than the 250000 one device may play; simulate at most 86 days"), "\(perDevice)")
        #expect(try Fleet(devices: 1, days: 86, mix: mix).days == 86)
        #expect(throws: FleetError.self) { _ = try Fleet(devices: 1, days: 87, mix: mix) }
        let total = try #require(throws: FleetError.self) { _ = try Fleet(devices: 1_300_000, days: 1, mix: mix) }.message
        #expect(total.contains("more than the \(Fleet.maximumEvents) a fleet may play (it would take hours); simulate at most 1249132 devices over 1 day"), "\(total)")
        #expect(try Fleet(devices: 1_249_132, days: 1, mix: mix).devices == 1_249_132, "what the refusal says fits, fits")
        // Counted for the average device: a rare dense life among sparse ones passes.
        #expect(try Fleet(devices: 1_000_000, days: 1, mix: Fleet.Mix.parse("commuter=1000,\(dense)=1")).devices == 1_000_000)
        // Every built-in at the device-day limit, over any number of days (a partial week of
        // the commuter's weekdays is denser than its weekly mean).
        for name in Scenario.builtInNames {
            let mix = try Fleet.Mix.parse("\(name)=1")
            for days in 1...Fleet.maximumDays {
                let devices = min(Fleet.maximumDevices, Fleet.maximumDeviceDays / days)
                #expect(throws: Never.self, "\(name), \(devices) devices × \(days) days") { _ = try Fleet(devices: devices, days: days, mix: mix) }
            }
        }
    }

    /// A device's history ends on the pattern's day before the start's: whole repetitions of
    /// a pattern of up to four weeks, the last `historyDays` days of a longer one (a year's
    /// pattern in a file gave every device a year of history to draw).
    @Test(arguments: [(7, 14), (28, 28), (29, 14), (400, 14)])
    func aDevicesHistoryEndsOnThePatternsLastDay(patternDays: Int, historyDays: Int) throws {
        // The app is opened every day at 08:00, on the pattern's last day at 09:00.
        var pattern = Array(repeating: #"{"launches": [{"at": "08:00"}]}"#, count: patternDays)
        pattern[patternDays - 1] = #"{"launches": [{"at": "09:00"}]}"#
        let scenario = try Scenario.parse(Data(#"{"version": 1, "name": "pattern", "jitterMinutes": 0, "days": [\#(pattern.joined(separator: ","))]}"#.utf8))
        let fleet = try Fleet(devices: 1, days: 1, mix: Fleet.Mix([.init(scenario: scenario, weight: 1)]), configuration: .simulation(environment: [:]))
        let history = fleet.script(forDevice: 0).history.map(\.start).sorted()
        #expect(history.count == historyDays, "one session a day of history")
        #expect(history.last == fleet.start.addingTimeInterval(-86_400 + 9 * 3_600), "the day before the start is the pattern's last")
        #expect(history.first.map { fleet.start.timeIntervalSince($0) } == Double(historyDays) * 86_400 - 8 * 3_600)
    }

    // MARK: --shared-outage

    @Test(arguments: [("07:00-08:00", 420, 480), ("00:00-24:00", 0, 1440), ("23:59-24:00", 1439, 1440)])
    func anOutageReadsAsMinutesOfTheDay(text: String, from: Int, to: Int) throws {
        #expect(try Fleet.SharedOutage.parse(text) == Fleet.SharedOutage(from: from, to: to))
    }

    @Test(arguments: ["08:00-07:00", "08:00-08:00", "7-8", "25:00-26:00", "07:60-08:00", "07:00", "07:00-08:00-09:00", "", "24:00-24:01"])
    func aBadOutageIsRefusedNamingTheText(text: String) throws {
        let error = try #require(throws: FleetError.self) { _ = try Fleet.SharedOutage.parse(text) }
        #expect(error.message.hasPrefix("--shared-outage: "), "\(error.message)")
        #expect(error.message.contains("found '\(text)'"), "\(error.message)")
    }

    // MARK: Limits

    @Test(arguments: [
        (0, 1, "--devices must be at least 1, found 0"),
        (-5, 1, "--devices must be at least 1, found -5"),
        (10, 0, "--days must be at least 1, found 0"),
        (10, -1, "--days must be at least 1, found -1"),
        (Fleet.maximumDevices + 1, 1, "--devices 10000001 is more than the 10000000"),
        (10, Fleet.maximumDays + 1, "--days 3661 is more than the 3660"),
        (100_000, 1_001, "--devices 100000 × --days 1001 is more than the 100000000 device-days"),
        (Int.max, 2, "--devices \(Int.max) is more than"),
    ])
    func sizesThatMakeNoSenseOrWouldNotFinishAreRefused(devices: Int, days: Int, message: String) throws {
        let error = try #require(throws: FleetError.self) { _ = try Fleet(devices: devices, days: days) }
        #expect(error.message.contains(message), "\(error.message)")
    }

    @Test func theLargestFleetsAllowedAreAccepted() throws {
        // Created, not run: the limits are inclusive.
        let widest = try Fleet(devices: Fleet.maximumDevices, days: Fleet.maximumDeviceDays / Fleet.maximumDevices)
        #expect(widest.devices * widest.days == Fleet.maximumDeviceDays)
        #expect(try Fleet(devices: 1, days: Fleet.maximumDays).days == Fleet.maximumDays)
        #expect(throws: FleetError("--mix names no scenario")) { try Fleet(devices: 1, days: 1, mix: Fleet.Mix([])) }
        #expect(throws: FleetError("a fleet needs at least one app")) { try Fleet(devices: 1, days: 1, apps: []) }
    }

    // MARK: Running

    @Test func aFleetIsTheSumOfItsDevicesAndTheSameTwice() throws {
        let fleet = try Self.fleet(devices: 120, days: 2)
        let first = fleet.run()
        let second = fleet.run()
        #expect(first.runsPerMinute.count == 2 * 1440)
        #expect(first.runsPerMinute == second.runsPerMinute)
        #expect(first.devices == 120)

        let devices = (0..<fleet.devices).map(fleet.simulateDevice)
        #expect(first.runs == devices.reduce(0) { $0 + $1.runStarts.count })
        #expect(first.runs > 120 * 2 * 5, "\(first.runs) runs")
        #expect(first.launches == devices.reduce(0) { $0 + $1.launches })
        #expect(first.freshLaunches == devices.reduce(0) { $0 + $1.freshLaunches })
        #expect(first.wakeups == devices.reduce(0) { $0 + $1.wakeups })
        #expect(abs(first.joules - devices.reduce(0) { $0 + $1.joules }) < 1e-6 * first.joules)
        var perMinute = Array(repeating: 0, count: 2 * 1440)
        for device in devices { for minute in device.runStarts { perMinute[minute] += 1 } }
        #expect(perMinute == first.runsPerMinute)
    }

    @Test func devicesLiveDifferentDays() throws {
        let fleet = try Self.fleet(devices: 4)
        let scripts = (0..<4).map { fleet.script(forDevice: $0).script }
        #expect(Set(scripts.map(\.seed)).count == 4)
        #expect(Set(scripts.map(\.changes)).count == 4)
        #expect(fleet.script(forDevice: 2).script == scripts[2])
    }

    @Test func herdSpreadingFlattensTheStampedeWhenTheNetworkReturns() throws {
        let outage = try Fleet.SharedOutage.parse("07:00-08:00")
        let spread = try Self.fleet(devices: 300, outage: outage).run()
        let herd = try Self.fleet(devices: 300, outage: outage, herdSpreading: false).run()
        // Nobody runs during the outage, with or without spreading.
        #expect(spread.runsPerMinute[420..<480].allSatisfy { $0 == 0 })
        #expect(herd.runsPerMinute[420..<480].allSatisfy { $0 == 0 })
        let spreadPeak = spread.peakAfter(minuteOfDay: 480, window: 15)
        let herdPeak = herd.peakAfter(minuteOfDay: 480, window: 15)
        #expect(herdPeak >= 10, "only \(herdPeak) devices ran together when the network returned")
        #expect(herd.runsPerMinute[480] == herdPeak, "without spreading the stampede is in the minute the network returns")
        #expect(spreadPeak * 2 < herdPeak, "peak \(spreadPeak) with spreading, \(herdPeak) without")
    }

    @Test func theShareOfFreshLaunchesIsAShare() throws {
        let result = try Self.fleet(devices: 60).run()
        #expect(result.launches > 60)
        #expect((0...1).contains(result.freshShare))
        #expect(result.freshLaunches > 0 && result.freshLaunches < result.launches, "\(result.freshLaunches) of \(result.launches)")
    }

    @Test func theSummaryHasTheOutageRowOnlyWithAnOutage() throws {
        let outage = try Fleet.SharedOutage.parse("07:00-08:00")
        let result = try Self.fleet(devices: 30, outage: outage).run()
        let plain = result.summaryRows(sharedOutage: nil)
        let withOutage = result.summaryRows(sharedOutage: outage)
        #expect(withOutage.count == plain.count + 1)
        #expect(Array(withOutage.prefix(plain.count)) == plain)
        #expect(!plain.contains { $0.name.contains("network returns") })
        let row = try #require(withOutage.last)
        #expect(row.name == "peak minute in the 15 min after the network returns at 08:00")
        #expect(row.value == "\(result.peakAfter(minuteOfDay: 480, window: 15))")
        // An outage over the whole day, every day: the network never returns, said so,
        // not "after the network returns at 24:00".
        let allDay = result.summaryRows(sharedOutage: try Fleet.SharedOutage.parse("00:00-24:00"))
        #expect(allDay.last == FleetReport.Row(name: "the shared outage", value: "covers the whole day, every day: the network never returns"))
        #expect(!allDay.contains { $0.name.contains("network returns") })
        #expect(plain.first == FleetReport.Row(name: "devices", value: "30"))
        #expect(plain.contains(FleetReport.Row(name: "task runs (backend requests)", value: "\(result.runs)")))
        #expect(plain.contains(FleetReport.Row(name: "worst minute", value: FleetResult.minuteLabel(result.peak.minute))))
    }

    @Test func peaksAndLabelsAreReadFromTheMinutes() {
        #expect(FleetResult.minuteLabel(0) == "day 1 00:00")
        #expect(FleetResult.minuteLabel(1440 + 481) == "day 2 08:01")
        #expect(FleetResult.clock(1439) == "23:59")
    }

    // MARK: Against the timers

    @Test func stalenessQuantilesOfTheFleetAreThoseOfItsLaunchesToTenSeconds() throws {
        let fleet = try Self.fleet(devices: 40)
        let result = fleet.run()
        let devices = (0..<fleet.devices).map(fleet.simulateDevice)
        let ages = devices.flatMap(\.ages)
        #expect(result.launchesWithoutContent == ages.filter { $0 == nil }.count)
        // A launch without content ranks above every age (no figure where one falls).
        let ranked = ages.map { $0.map { $0 / 60 } ?? .infinity }
        for quantile in [0.1, 0.5, 0.9, 1.0] {
            let exact = try #require(EnergySummary.percentile(quantile, of: ranked))
            guard exact.isFinite else {
                #expect(result.stalenessMinutes(quantile: quantile) == nil, "quantile \(quantile)")
                continue
            }
            let binned = try #require(result.stalenessMinutes(quantile: quantile))
            #expect(abs(binned - exact) <= 10.0 / 60 / 2 + 1e-9, "quantile \(quantile): \(binned) vs \(exact)")
        }
        #expect(result.figures.refreshesPerDay == Double(devices.reduce(0) { $0 + $1.refreshes }) / 40)
        #expect(FleetResult(devices: 0, days: 1, freshWithin: 60).stalenessMinutes(quantile: 0.5) == nil, "no launch, no figure")
    }

    @Test func theFleetAgainstTheTimersSpendsAQuarterOfTheTimersWakeupsAndTheSameInEachThread() throws {
        let fleet = try Self.fleet(devices: 24)
        let comparison = fleet.compareWithTimers(workers: 2)
        #expect(comparison.policyRun.runsPerMinute == fleet.run().runsPerMinute, "the policy's run is the fleet's own")
        #expect(comparison.timer15.wakeupsPerDay > 3 * comparison.policy.wakeupsPerDay, "\(comparison.timer15.wakeupsPerDay) vs \(comparison.policy.wakeupsPerDay)")
        // The equal-budget timer wakes about as often as the policy (the sample is the fleet).
        #expect(abs(comparison.equalBudgetTimer.wakeupsPerDay - comparison.policy.wakeupsPerDay) <= 0.1 * comparison.policy.wakeupsPerDay,
                "\(comparison.equalBudgetTimer.wakeupsPerDay) vs \(comparison.policy.wakeupsPerDay)")
        #expect(comparison.equalBudgetInterval > 15 * 60)
        #expect(comparison.goals == .judging(policy: comparison.policy, timer15: comparison.timer15, equalBudgetTimer: comparison.equalBudgetTimer))
        let again = fleet.compareWithTimers(workers: 1)
        #expect(again.timer15 == comparison.timer15 && again.equalBudgetTimer == comparison.equalBudgetTimer && again.policy == comparison.policy)
    }

    @Test func theResultDoesNotDependOnTheNumberOfThreads() throws {
        let fleet = try Fleet(devices: 60, days: 1, seed: 9)
        let one = fleet.run(workers: 1)
        let three = fleet.run(workers: 3)
        #expect(one.runsPerMinute == three.runsPerMinute)
        #expect(one.joules == three.joules)
        #expect(one.launches == three.launches && one.freshLaunches == three.freshLaunches && one.wakeups == three.wakeups)
        #expect(one.figures == three.figures)
    }
}
