// A shape the fifteenth outside probe found in a public app (written here in its shape, not
// copied): preference keys kept with the asset catalog's image resources, read by the app's
// background refresh, so the file must compile for the refresh to.
import Foundation
import SwiftUI
import Testing

/// The images a chart preference offers, as the app declares its resources.
enum ChartAppearance: String, CaseIterable {
    case linear, radial

    var image: ImageResource {
        switch self {
        case .linear: ImageResource(name: "solarchart-linear", bundle: .main)
        case .radial: ImageResource(name: "solarchart-radial", bundle: .main)
        }
    }
}

@Suite struct FifteenthProbeSnippetTests {
    @Test func imageResourcesCompileAndNameTheirAssets() {
        #expect(ChartAppearance.linear.image.name == "solarchart-linear")
        #expect(Image(ChartAppearance.radial.image).name == "solarchart-radial")
        #expect(ChartAppearance.linear.image != ChartAppearance.radial.image)
    }
}
