import ExampleViews
import Examples
import ViewNode
import ZFluxCLI

// The stock zflux: the framework's command line with the example apps and their screens.
var host = ZFluxCLI.Host(
    apps: { context in Catalog.apps(context) }, screens: ScreenRegistry(ExampleScreens.all), codecSamples: Catalog.codecSamples(),
    defaultConfig: Catalog.defaultClusterConfig, demoStory: Catalog.demoStory, simulationMix: Catalog.simulationMix)
// `zflux --version` names the commit (BuildInfo.swift is written by the package's BuildInfo plugin).
host.buildCommit = BuildInfo.commit
await ZFluxCLI.main(host)
