import Examples
import FluxClusterTesting
import FluxCore
import FluxTesting
import Foundation
import Testing

@Suite("Primes (the Point-Free counter)")
struct PrimesTests {
    @Test("counting, asking for the nth prime with the button disabled meanwhile, and dismissing the answer")
    func nthPrime() async {
        let store = TestStore(Primes.app(environment: .mock()))
        await store.send(.nthPrimeTapped, rejectedWith: "count to 1 or more first")
        await store.send(.incrementTapped) { $0.count = 1 }
        await store.send(.incrementTapped) { $0.count = 2 }
        await store.send(.decrementTapped) { $0.count = 1 }
        await store.send(.incrementTapped) { $0.count = 2 }
        await store.send(.incrementTapped) { $0.count = 3 }
        #expect(store.state.isNthPrimeButtonEnabled)
        await store.send(.nthPrimeTapped) { $0.isNthPrimeRequestInFlight = true }
        #expect(!store.state.isNthPrimeButtonEnabled, "the button is disabled while the request runs")
        await store.send(.nthPrimeTapped, rejectedWith: "a request for the nth prime is already running")
        await store.receive(.nthPrimeResponse(n: 3, prime: 5)) {
            $0.isNthPrimeRequestInFlight = false
            $0.alert = "The 3rd prime is 5"
        }
        await store.send(.alertDismissed) { $0.alert = nil }
        await store.finish()
    }

    @Test("a failed request says so; moving the count clears an answer about the old count")
    func failureAndOnChange() async {
        struct Down: Error {}
        let store = TestStore(Primes.app(environment: .mock(nthPrime: { _ in throw Down() })))
        await store.send(.incrementTapped) { $0.count = 1 }
        await store.send(.nthPrimeTapped) { $0.isNthPrimeRequestInFlight = true }
        await store.receive(.nthPrimeResponse(n: 1, prime: nil)) {
            $0.isNthPrimeRequestInFlight = false
            $0.alert = "Could not find the 1st prime"
        }
        await store.send(.incrementTapped) {
            $0.count = 2
            $0.alert = nil  // onChange(of: \.count)
        }
        await store.finish()
    }

    @Test("favourites: saved with the action's sequenced time by a fire-and-forget effect, refused when not prime, loaded back")
    func favorites() async throws {
        let files = Primes.MockFiles()
        let store = TestStore(Primes.app(environment: .mock(files: files)))
        await store.send(.favoriteToggled, rejectedWith: "0 is not prime")
        await store.send(.incrementTapped) { $0.count = 1 }
        await store.send(.incrementTapped) { $0.count = 2 }
        let savedAt = Date(timeIntervalSince1970: 1_800_000_000)
        store.time = savedAt
        await store.send(.favoriteToggled) { $0.favorites = [Primes.Favorite(prime: 2, savedAt: savedAt)] }
        await store.finish()
        #expect(files.saveCount == 1, "the save is an effect that sends nothing back")
        let written = try JSONDecoder().decode([Primes.Favorite].self, from: try #require(files[Primes.favoritesFile]))
        #expect(written == [Primes.Favorite(prime: 2, savedAt: savedAt)])

        // A store starting afresh loads what the file holds.
        let fresh = TestStore(Primes.app(environment: .mock(files: files)))
        await fresh.send(.loadFavoritesTapped)
        await fresh.receive(.favoritesLoaded(favorites: written)) {
            $0.favoritesLoaded = true
            $0.favorites = written
        }
        await fresh.send(.incrementTapped) { $0.count = 1 }
        await fresh.send(.incrementTapped) { $0.count = 2 }
        await fresh.send(.favoriteToggled) { $0.favorites = [] }
        await fresh.finish()
        #expect(files.saveCount == 2)
        #expect(try JSONDecoder().decode([Primes.Favorite].self, from: try #require(files[Primes.favoritesFile])) == [])
    }

    @Test("the nth prime, and primality, for the first few and a larger one")
    func arithmetic() {
        #expect((1...10).compactMap(Primes.nthPrime) == [2, 3, 5, 7, 11, 13, 17, 19, 23, 29])
        #expect(Primes.nthPrime(1000) == 7919)
        #expect(Primes.nthPrime(0) == nil && Primes.nthPrime(Primes.maxN + 1) == nil)
        #expect([-3, 0, 1, 4, 9, 15].allSatisfy { !Primes.isPrime($0) })
    }

    @Test("the poison favourite of issue 35 is refused before it is journaled, and primality near the bound does not overflow")
    func poisonFavourite() {
        let app = Primes.app(environment: .mock())
        let poison = Primes.Action.favoritesLoaded(favorites: [
            Primes.Favorite(prime: 9_223_372_036_854_775_783, savedAt: Date(timeIntervalSince1970: 0))
        ])
        #expect(app.validate(poison) == "9223372036854775783 is over \(Primes.maxFavorite), the largest favourite")
        let many = Primes.Action.favoritesLoaded(
            favorites: Array(repeating: Primes.Favorite(prime: 11, savedAt: Date(timeIntervalSince1970: 0)), count: Primes.maxFavorites + 1))
        #expect(app.validate(many) != nil)
        #expect(app.validate(.favoritesLoaded(favorites: [Primes.Favorite(prime: 9_999_991, savedAt: Date(timeIntervalSince1970: 0))])) == nil)
        // Primes run the loop to their square root (`divisor <= n / divisor` never overflows); Int.max
        // (7 × 73 × …) is found composite at once.
        #expect(Primes.isPrime(2_147_483_647) && Primes.isPrime(9_999_991) && !Primes.isPrime(Int.max))
    }

    @Test("in a cluster: the answer arrives as an alert through the dispatcher, and the favourite's date is the dispatcher's stamp")
    func cluster() async throws {
        let cluster = try await TestCluster.start(stores: ["primes": Primes.app(environment: .mock())])
        for _ in 0..<5 { try await cluster.dispatch(Primes.Action.incrementTapped, to: "primes") }
        let before = Date()
        let favoriteSeq = try await cluster.dispatch(Primes.Action.favoriteToggled, to: "primes")
        let after = Date()
        try await cluster.dispatch(Primes.Action.nthPrimeTapped, to: "primes")
        let answered = try await cluster.state(of: "primes", as: Primes.State.self) { $0.alert != nil }
        #expect(answered.alert == "The 5th prime is 11")
        #expect(!answered.isNthPrimeRequestInFlight)
        let saved = try #require(answered.favorites.first)
        #expect(saved.prime == 5)
        #expect(saved.savedAt >= before.addingTimeInterval(-1) && saved.savedAt <= after.addingTimeInterval(1), "stamped when sequenced")
        #expect(favoriteSeq == 6)
        try await cluster.shutdown()
    }
}
