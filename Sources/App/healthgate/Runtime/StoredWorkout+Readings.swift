import HealthModel
import HealthStore
import WorkoutPresentation

extension StoredWorkout {
    /// What its chart and export draw (``WorkoutReadings``): `workout chart|export` and the
    /// board's history.
    /// - Throws: ``SampleError`` for a damaged curve.
    func readings() throws(SampleError) -> WorkoutReadings {
        try WorkoutReadings(workout: workout, samples: samples, curves: curves.map { ($0.type, $0.points) })
    }
}
