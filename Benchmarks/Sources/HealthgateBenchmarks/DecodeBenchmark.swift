import Foundation
import HeartRateMonitor
import SerialPedometer

/// Payloads decoded per second, against a baseline loop that only sums the same bytes.
///
/// The payloads are built once, outside the timed region, as `[[UInt8]]` (the shape in which the
/// transport hands them to the source). Timed: the decode loop only. Figures are per CPU second
/// of this (single-threaded) loop, the best of 5 runs.
enum DecodeBenchmark {
    static func run(report: inout Report) {
        report.section("Decoding (one core)")
        report.line("Timed region: decoding every pre-built payload (the result is consumed so it cannot be optimized away). "
            + "Baseline: summing the bytes of the same payloads. Figures use CPU time (getrusage), best of 5.")
        report.line("")
        let count = 1 << 20
        // A chest strap's typical notification: flags 0x16 (contact detected, RR present), HR,
        // one or two RR intervals. And the simulator's: flags 0x1E (+ energy expended), up to
        // 8 RR intervals. And the minimal one: HR only.
        var typical: [[UInt8]] = []
        var simulator: [[UInt8]] = []
        var minimal: [[UInt8]] = []
        var running: [[UInt8]] = []
        typical.reserveCapacity(count)
        for index in 0..<count {
            let bpm = UInt8(60 + index % 90)
            let rr = UInt16(60_000 / Int(bpm) * 1024 / 1000)
            typical.append(index % 3 == 0
                ? [0x16, bpm, UInt8(rr & 0xFF), UInt8(rr >> 8), UInt8((rr + 7) & 0xFF), UInt8((rr + 7) >> 8)]
                : [0x16, bpm, UInt8(rr & 0xFF), UInt8(rr >> 8)])
            simulator.append([0x1E, bpm, UInt8(index & 0xFF), 0x01, UInt8(rr & 0xFF), UInt8(rr >> 8)])
            minimal.append([0x06, bpm])
            running.append([
                0x07, UInt8(index & 0xFF), 0x02, UInt8(160 + index % 12), 0x74, 0x00,
                UInt8(index & 0xFF), UInt8((index >> 8) & 0xFF), UInt8((index >> 16) & 0xFF), 0x00,
            ])
        }
        var rows: [[String]] = []
        var hrmTypicalRate = 0.0
        for (name, payloads) in [("HRM, HR + 1–2 RR (chest strap)", typical), ("HRM, HR + energy + RR (simulator)", simulator),
                                 ("HRM, HR only", minimal)] {
            let baseline = cpuRate(count: payloads.count) { sumBytes(payloads) }
            let decoder = cpuRate(count: payloads.count) { decodeHeartRate(payloads) }
            if name.hasPrefix("HRM, HR + 1") { hrmTypicalRate = decoder }
            rows.append([name, Harness.format(decoder / 1e6, decimals: 1) + " M/s",
                         Harness.format(baseline / 1e6, decimals: 1) + " M/s",
                         String(format: "%.2f×", decoder / baseline),
                         String(format: "%.0f ns", 1e9 / decoder)])
        }
        let rscBaseline = cpuRate(count: running.count) { sumBytes(running) }
        let rsc = cpuRate(count: running.count) { decodeRunning(running) }
        rows.append(["RSC, speed + cadence + stride + distance", Harness.format(rsc / 1e6, decimals: 1) + " M/s",
                     Harness.format(rscBaseline / 1e6, decimals: 1) + " M/s", String(format: "%.2f×", rsc / rscBaseline),
                     String(format: "%.0f ns", 1e9 / rsc)])
        // HGP/1 lines as a pedometer sends them, fed one line per read (the usual tty chunk).
        var lines: [[UInt8]] = []
        for index in 0..<(count / 4) {
            lines.append(Array(HGPTextDecoder.sentence("ST,\(1000 + index),\(750 + index / 2).5,\(100 + index % 40),\(1_800_000_000 + index)").utf8))
        }
        let lineBaseline = cpuRate(count: lines.count) { sumBytes(lines) }
        let lineRate = cpuRate(count: lines.count) { decodeLines(lines) }
        rows.append(["HGP/1 `$ST,…*hh` lines (framer + decoder)", Harness.format(lineRate / 1e6, decimals: 2) + " M/s",
                     Harness.format(lineBaseline / 1e6, decimals: 1) + " M/s", String(format: "%.3f×", lineRate / lineBaseline),
                     String(format: "%.0f ns", 1e9 / lineRate)])
        report.table(["payloads", "decoded per CPU second", "baseline (sum bytes)", "ratio", "per payload"], rows)
        report.line("Budget: ≥ 10 M HRM payloads/s on one core (typical chest-strap payload): "
            + Harness.format(hrmTypicalRate / 1e6, decimals: 1) + " M/s, " + report.verdict(hrmTypicalRate >= 10e6) + ".")
    }

    /// Payloads per CPU second of `body`, which handles `count` payloads; the best of 5 runs.
    private static func cpuRate(count: Int, _ body: () -> Int) -> Double {
        var best = Double.infinity
        for _ in 0..<5 {
            let start = Harness.cpuSeconds()
            blackHole(body())
            best = min(best, Harness.cpuSeconds() - start)
        }
        return Double(count) / best
    }

    @inline(never)
    static func sumBytes(_ payloads: [[UInt8]]) -> Int {
        var sum = 0
        for payload in payloads {
            for byte in payload { sum &+= Int(byte) }
        }
        return sum
    }

    @inline(never)
    static func decodeHeartRate(_ payloads: [[UInt8]]) -> Int {
        var sum = 0
        for payload in payloads {
            do {
                let measurement = try HeartRateMeasurementDecoder.decode(payload)
                sum &+= measurement.heartRate &+ measurement.rrIntervals.count &+ (measurement.energyExpended ?? 0)
            } catch {
                sum &-= 1
            }
        }
        return sum
    }

    @inline(never)
    static func decodeLines(_ lines: [[UInt8]]) -> Int {
        var decoder = PedometerStreamDecoder(HGPTextDecoder())
        var sum = 0
        for line in lines {
            for outcome in decoder.feed(line) {
                if case .success(.reading(let reading)) = outcome { sum &+= Int(reading.steps) } else { sum &-= 1 }
            }
        }
        return sum
    }

    @inline(never)
    static func decodeRunning(_ payloads: [[UInt8]]) -> Int {
        var sum = 0
        for payload in payloads {
            do {
                let measurement = try RSCMeasurementDecoder.decode(payload)
                sum &+= Int(measurement.speedRaw) &+ measurement.instantaneousCadence
                    &+ Int(measurement.totalDistanceRaw ?? 0)
            } catch {
                sum &-= 1
            }
        }
        return sum
    }
}
