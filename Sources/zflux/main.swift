import ExampleViews
import Examples
import ViewNode
import ZFluxCLI

// The stock zflux: the framework's command line with the example apps and their screens.
await ZFluxCLI.main(
    ZFluxCLI.Host(
        apps: { context in Catalog.apps(context) }, screens: ScreenRegistry(ExampleScreens.all), codecSamples: Catalog.codecSamples(),
        defaultConfig: Catalog.defaultClusterConfig, demoStory: Catalog.demoStory, simulationMix: Catalog.simulationMix))
