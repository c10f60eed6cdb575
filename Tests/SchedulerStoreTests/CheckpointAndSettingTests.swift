import Foundation
import SchedulerCore
import Testing
@testable import SchedulerStore

@Suite("Checkpoints and app settings")
struct CheckpointAndSettingTests {
    @Test("checkpoints are set, read, overwritten, listed and removed per app")
    func checkpoints() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("store.sqlite")
        let bytes = Data((0...255).map { UInt8($0) }) // every byte value, NUL included
        do {
            let store = try openStore(url)
            #expect(try store.checkpoint(app: Sample.app, key: "offset") == nil)
            #expect(try store.saveCheckpoint(Data("first".utf8), app: Sample.app, key: "offset", at: Sample.now) == nil)
            #expect(try store.saveCheckpoint(bytes, app: Sample.app, key: "offset", at: Sample.now.addingTimeInterval(1)) == nil)
            #expect(try store.saveCheckpoint(Data(), app: Sample.app, key: "empty", at: Sample.now) == nil)
            #expect(try store.saveCheckpoint(Data("theirs".utf8), app: Sample.otherApp, key: "offset", at: Sample.now) == nil)
        }
        let store = try openStore(url)
        #expect(try store.checkpoint(app: Sample.app, key: "offset") == bytes)
        #expect(try store.checkpoint(app: Sample.app, key: "empty") == Data())
        #expect(try store.checkpoint(app: Sample.otherApp, key: "offset") == Data("theirs".utf8))
        #expect(try store.checkpointKeys(app: Sample.app) == ["empty", "offset"])

        try store.removeCheckpoint(app: Sample.app, key: "offset")
        try store.removeCheckpoint(app: Sample.app, key: "never-set")
        #expect(try store.checkpoint(app: Sample.app, key: "offset") == nil)
        #expect(try store.checkpointKeys(app: Sample.app) == ["empty"])
        #expect(try store.checkpointKeys(app: Sample.otherApp) == ["offset"])
    }

    @Test("app settings are set, overwritten and deleted with nil, per app")
    func appSettings() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("store.sqlite")
        do {
            let store = try openStore(url)
            #expect(try store.appSetting(app: Sample.app, name: "backgroundRefresh") == nil)
            try store.setAppSetting("on", app: Sample.app, name: "backgroundRefresh")
            try store.setAppSetting("off", app: Sample.app, name: "backgroundRefresh")
            try store.setAppSetting("on", app: Sample.otherApp, name: "backgroundRefresh")
            try store.setAppSetting("", app: Sample.app, name: "note")
        }
        let store = try openStore(url)
        #expect(try store.appSetting(app: Sample.app, name: "backgroundRefresh") == "off")
        #expect(try store.appSetting(app: Sample.otherApp, name: "backgroundRefresh") == "on")
        #expect(try store.appSetting(app: Sample.app, name: "note") == "")
        try store.setAppSetting(nil, app: Sample.app, name: "backgroundRefresh")
        #expect(try store.appSetting(app: Sample.app, name: "backgroundRefresh") == nil)
        #expect(try store.appSetting(app: Sample.otherApp, name: "backgroundRefresh") == "on")
    }
}
