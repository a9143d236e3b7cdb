import BLEProfileKit
public import SampleBus
import FoundationEssentials

extension HealthProfile {
    /// `healthgate decode` for the measurements of scales, cuffs, thermometers, oximeters and
    /// glucose meters.
    public static var payloadDecoders: [PayloadDecoder] {
        [
            PayloadDecoder(
                "weight-measurement", "Weight Measurement (0x2A9D) from a weight scale.",
                example: "healthgate decode weight-measurement 0E2035EA070B17061E0901F100B806",
                keys: """
                    weight (kg, or null when the scale reports an unsuccessful weighing), bmi (kg/m², or null), \
                    height (m, or null), userID (or null when absent or 255, "unknown user"), unit ("SI" | \
                    "imperial", as sent), timestamp (RFC 3339 with -00:00, the device's local time, or null)
                    """
            ) { bytes throws(HealthDecodingError) in try WeightMeasurementDecoder.decode(bytes).report },
            PayloadDecoder(
                "body-composition-measurement", "Body Composition Measurement (0x2A9C) from a body composition scale.",
                example: "healthgate decode body-composition-measurement 4404E00001E82B9038",
                keys: """
                    bodyFatPercentage (%, or null when the device reports an unsuccessful measurement), weight \
                    (kg), height (m), userID (or null when absent or 255, "unknown user"), unit ("SI" | \
                    "imperial", as sent), timestamp (RFC 3339 with -00:00, or null), basalMetabolism (kJ), \
                    musclePercentage (%), muscleMass, fatFreeMass, softLeanMass, bodyWaterMass (kg), impedance \
                    (ohm); null when absent; multiplePacket (boolean: one part of a record split across \
                    indications, which the gateway joins before it stores the record)
                    """
            ) { bytes throws(HealthDecodingError) in try BodyCompositionMeasurementDecoder.decode(bytes).report },
            PayloadDecoder(
                "blood-pressure-measurement", "Blood Pressure Measurement (0x2A35) from a cuff.",
                example: "healthgate decode blood-pressure-measurement 1E8A00580078000000041114293B3C00012700",
                keys: """
                    systolic, diastolic, meanArterialPressure (mmHg, converted from kPa; null for NaN, NRes, \
                    ±INFINITY or reserved), pulseRate (count/min, or null), userID (or null), measurementStatus \
                    (the status bits, or null), unit ("mmHg" | "kPa", as sent), timestamp (or null)
                    """
            ) { bytes throws(HealthDecodingError) in try BloodPressureMeasurementDecoder.decode(bytes).report },
            PayloadDecoder(
                "temperature-measurement", "Temperature Measurement (0x2A1C) from a thermometer.",
                example: "healthgate decode temperature-measurement 06B00E00FEDC070C050B321B04",
                keys: """
                    temperature (degC, converted from degF; null for a special value), unit ("degC" | "degF", \
                    as sent), temperatureType (armpit, body, ear, finger, gastrointestinalTract, mouth, rectum, \
                    toe, tympanum, or null), timestamp (or null)
                    """
            ) { bytes throws(HealthDecodingError) in try TemperatureMeasurementDecoder.decode(bytes).report },
            PayloadDecoder(
                "plx-spot-check", "PLX Spot-check Measurement (0x2A5E) from a pulse oximeter.",
                example: "healthgate decode plx-spot-check 0FACF3BEF5E8070B1D170839204022000066E3",
                keys: """
                    oxygenSaturation (%), pulseRate (count/min), pulseAmplitudeIndex (%, the perfusion index), \
                    measurementStatus, deviceAndSensorStatus (the status bits), timestamp (null when absent or \
                    when the device says its clock is not set); null for absent fields and special values
                    """
            ) { bytes throws(HealthDecodingError) in try PLXMeasurementDecoder.decodeSpotCheck(bytes).report },
            PayloadDecoder(
                "glucose-measurement", "Glucose Measurement (0x2A18) from a glucose meter.",
                example: "healthgate decode glucose-measurement 1B0100E307021B0B0A1EFBFF1E00120501",
                keys: """
                    sequenceNumber, concentration (mg/dL, converted from kg/L or mol/L; or null), unit ("kg/L" | \
                    "mol/L", as sent, or null), timeOffset (min, or null), timestamp (the base time plus the \
                    offset), baseTime, type, sampleLocation, sensorStatus (or null), contextFollows (boolean)
                    """
            ) { bytes throws(HealthDecodingError) in try GlucoseMeasurementDecoder.decode(bytes).report },
        ]
    }
}
