// swift-tools-version:6.0
// line-scale: a healthgate adapter for a bench scale that prints one line per weighing
// (README.md). Its own package, on the gateway's HealthgateAdapter library, as a user's adapter
// in Swift would be: it copies none of the protocol's types.
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "line-scale",
    platforms: [.macOS(.v15)],
    dependencies: [
        // The gateway's package, three folders up. A user's adapter elsewhere names it by URL.
        .package(name: "healthgate", path: "../../.."),
    ],
    targets: [
        // The scale's lines and what becomes of them: pure, no I/O, no clock of its own.
        .target(
            name: "LineScaleKit",
            dependencies: [
                .product(name: "HealthgateAdapter", package: "healthgate"),
            ],
            swiftSettings: swiftSettings),
        // The adapter: stdin and stdout through AdapterChannel, the scale's file read with Glibc.
        .executableTarget(
            name: "line-scale",
            dependencies: [
                "LineScaleKit",
                .product(name: "HealthgateAdapter", package: "healthgate"),
            ],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "LineScaleKitTests",
            dependencies: [
                // The adapter itself, built for AdapterProcessTests, which run it as the gateway does.
                "LineScaleKit", "line-scale",
                .product(name: "HealthgateAdapter", package: "healthgate"),
            ],
            swiftSettings: swiftSettings),
    ]
)
