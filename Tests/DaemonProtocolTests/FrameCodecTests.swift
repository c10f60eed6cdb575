import DaemonProtocol
import Foundation
import SchedulerCore
import Testing

/// docs/protocol.md, "Frames and connections": the frame layout, its limits, and a decoder
/// that takes bytes in any pieces.
@Suite struct FrameCodecTests {
    static func randomPayload(_ random: inout SeededRandom, maximum: Int = 300) -> Data {
        Data((0..<random.int(in: 0...maximum)).map { _ in UInt8(truncatingIfNeeded: random.next()) })
    }

    static func decodeAll(_ chunks: [Data]) throws(FrameError) -> (frames: [Frame], decoder: FrameDecoder) {
        var decoder = FrameDecoder()
        var frames: [Frame] = []
        for chunk in chunks {
            decoder.append(chunk)
            while let frame = try decoder.next() { frames.append(frame) }
        }
        return (frames, decoder)
    }

    @Test func layoutIsLengthBigEndianThenVersionThenPayload() throws {
        let bytes = try FrameEncoder.encode(Data([0xAA, 0xBB, 0xCC]))
        #expect(Array(bytes) == [0, 0, 0, 3, FrameFormat.currentVersion, 0xAA, 0xBB, 0xCC])
        #expect(FrameFormat.currentVersion == 1)
        let long = try FrameEncoder.encode(Data(count: 0x01_02_03))
        #expect(Array(long.prefix(5)) == [0x00, 0x01, 0x02, 0x03, 1])
        #expect(Array(try FrameEncoder.encode(Data())) == [0, 0, 0, 0, 1])
    }

    @Test func encoderRefusesOversizedPayloads() throws {
        let limit = FrameFormat.maximumPayloadLength
        #expect(limit == 1_048_576)
        #expect(try FrameEncoder.encode(Data(count: limit)).count == limit + 5)
        #expect(throws: FrameError.lengthOverLimit(length: limit + 1, limit: limit)) { try FrameEncoder.encode(Data(count: limit + 1)) }
        #expect(throws: FrameError.lengthOverLimit(length: 11, limit: 10)) { try FrameEncoder.encode(Data(count: 11), maximumPayloadLength: 10) }
    }

    @Test func oversizedLengthIsRefusedAsSoonAsTheHeaderIsIn() throws {
        var decoder = FrameDecoder()
        decoder.append([0xFF, 0xFF, 0xFF, 0xFF])
        #expect(try decoder.next() == nil)
        decoder.append([1])
        #expect(throws: FrameError.lengthOverLimit(length: 4_294_967_295, limit: 1_048_576)) { try decoder.next() }
        #expect(decoder.bufferedByteCount == 0)
        // Just over the limit is refused; exactly the limit waits for its payload.
        var justOver = FrameDecoder()
        justOver.append([0x00, 0x10, 0x00, 0x01, 1])
        #expect(throws: FrameError.lengthOverLimit(length: 1_048_577, limit: 1_048_576)) { try justOver.next() }
        var atLimit = FrameDecoder()
        atLimit.append([0x00, 0x10, 0x00, 0x00, 1])
        #expect(try atLimit.next() == nil)
        atLimit.append(Data(count: 1_048_576))
        #expect(try atLimit.next()?.payload.count == 1_048_576)
        #expect(atLimit.consumedByteCount == 1_048_581)
    }

    @Test func aSmallerConfiguredLimitIsHonoured() throws {
        var decoder = FrameDecoder(maximumPayloadLength: 16)
        decoder.append(try FrameEncoder.encode(Data(count: 16)))
        #expect(try decoder.next()?.payload.count == 16)
        decoder.append(try FrameEncoder.encode(Data(count: 17)))
        #expect(throws: FrameError.lengthOverLimit(length: 17, limit: 16)) { try decoder.next() }
        #expect(FrameDecoder(maximumPayloadLength: Int.max).maximumPayloadLength == FrameFormat.maximumPayloadLength)
    }

    @Test func unknownVersionIsRefusedAndTheErrorIsFinal() throws {
        for version: UInt8 in [0, 2, 255] {
            var decoder = FrameDecoder()
            decoder.append([0, 0, 0, 1, version])
            #expect(throws: FrameError.unknownVersion(version)) { try decoder.next() }
            // Later bytes, even a valid frame, cannot resynchronise the stream.
            decoder.append(try FrameEncoder.encode(Data([1])))
            #expect(throws: FrameError.unknownVersion(version)) { try decoder.next() }
            #expect(decoder.failure == .unknownVersion(version))
        }
    }

    @Test func errorsNameWhatWasWrong() {
        #expect(FrameError.lengthOverLimit(length: 5_000_000, limit: 1_048_576).description == "frame length 5000000 is over the limit of 1048576 bytes")
        #expect(FrameError.unknownVersion(9).description == "frame protocol version 9 is unknown (this side speaks 1)")
    }

    @Test func concatenatedRandomFramesRoundTripAndCountConsumedBytes() throws {
        var random = SeededRandom(seed: 9)
        for _ in 0..<50 {
            let payloads = (0..<random.int(in: 0...20)).map { _ in Self.randomPayload(&random) }
            var stream = Data()
            for payload in payloads { stream.append(try FrameEncoder.encode(payload)) }
            let (frames, decoder) = try Self.decodeAll([stream])
            #expect(frames.map(\.payload) == payloads)
            #expect(frames.allSatisfy { $0.version == FrameFormat.currentVersion })
            #expect(decoder.consumedByteCount == stream.count)
            #expect(decoder.frameCount == payloads.count)
            #expect(decoder.bufferedByteCount == 0)
        }
    }

    @Test func splitAtEveryByteBoundaryGivesTheSameFrames() throws {
        var random = SeededRandom(seed: 17)
        let payloads = (0..<6).map { _ in Self.randomPayload(&random, maximum: 40) } + [Data()]
        var stream = Data()
        for payload in payloads { stream.append(try FrameEncoder.encode(payload)) }
        for split in 0...stream.count {
            let (frames, decoder) = try Self.decodeAll([stream.prefix(split), stream.dropFirst(split)])
            #expect(frames.map(\.payload) == payloads, "split at \(split)")
            #expect(decoder.consumedByteCount == stream.count)
        }
        // Byte by byte, and in random pieces.
        #expect(try Self.decodeAll(stream.map { Data([$0]) }).frames.map(\.payload) == payloads)
        for _ in 0..<100 {
            var chunks: [Data] = []
            var offset = 0
            while offset < stream.count {
                let size = min(random.int(in: 1...30), stream.count - offset)
                chunks.append(stream.subdata(in: offset..<(offset + size)))
                offset += size
            }
            #expect(try Self.decodeAll(chunks).frames.map(\.payload) == payloads)
        }
    }

    @Test func truncationAtEveryOffsetYieldsTheWholeFramesAndWaits() throws {
        var random = SeededRandom(seed: 23)
        let payloads = (0..<5).map { _ in Self.randomPayload(&random, maximum: 30) }
        let encoded = try payloads.map { payload throws(FrameError) in try FrameEncoder.encode(payload) }
        let stream = encoded.reduce(Data(), +)
        for cut in 0...stream.count {
            let (frames, decoder) = try Self.decodeAll([stream.prefix(cut)])
            // The frames entirely inside the prefix, no more, no error.
            var complete = 0
            var end = 0
            for frame in encoded {
                guard end + frame.count <= cut else { break }
                end += frame.count
                complete += 1
            }
            #expect(frames.count == complete, "cut at \(cut)")
            #expect(frames.map(\.payload) == Array(payloads.prefix(complete)))
            #expect(decoder.consumedByteCount == end)
            #expect(decoder.bufferedByteCount == cut - end)
        }
    }

    @Test func randomGarbageNeverCrashesAndEndsInAFrameOrAnError() throws {
        var random = SeededRandom(seed: 31)
        var errors = 0
        for _ in 0..<2_000 {
            let garbage = (0..<random.int(in: 0...64)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            var decoder = FrameDecoder()
            decoder.append(garbage)
            var consumed = 0
            do {
                while let frame = try decoder.next() {
                    #expect(frame.version == FrameFormat.currentVersion)
                    #expect(frame.payload.count <= FrameFormat.maximumPayloadLength)
                    consumed += 5 + frame.payload.count
                }
                #expect(decoder.consumedByteCount == consumed)
                #expect(consumed + decoder.bufferedByteCount == garbage.count)
            } catch {
                errors += 1
                // Final: the next call throws the same.
                #expect(throws: error) { try decoder.next() }
            }
        }
        // Random headers almost always claim more than 1 MiB or a wrong version.
        #expect(errors > 1_500)
    }

    @Test func garbageAfterValidFramesKeepsTheFramesBeforeIt() throws {
        var decoder = FrameDecoder()
        decoder.append(try FrameEncoder.encode(Data("one".utf8)))
        decoder.append(try FrameEncoder.encode(Data("two".utf8)))
        decoder.append([0x7F, 0x00, 0x00, 0x00, 0x01])
        #expect(try decoder.next()?.payload == Data("one".utf8))
        #expect(try decoder.next()?.payload == Data("two".utf8))
        #expect(throws: FrameError.lengthOverLimit(length: 0x7F00_0000, limit: 1_048_576)) { try decoder.next() }
        #expect(decoder.consumedByteCount == 16)
    }

    @Test func aLongStreamThroughOneDecoderKeepsOnlyWhatIsNotReturned() throws {
        var decoder = FrameDecoder()
        let frame = try FrameEncoder.encode(Data(count: 10_000))
        for round in 0..<500 {
            decoder.append(frame)
            decoder.append(frame.prefix(3))
            #expect(try decoder.next()?.payload.count == 10_000)
            if round > 0 { #expect(try decoder.next()?.payload.count == 10_000) }
            #expect(try decoder.next() == nil)
            #expect(decoder.bufferedByteCount == 3)
            decoder.append(frame.dropFirst(3))
            #expect(decoder.bufferedByteCount == frame.count)
        }
        #expect(decoder.frameCount == 999)
    }
}
