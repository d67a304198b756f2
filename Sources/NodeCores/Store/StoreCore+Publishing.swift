import FluxCore
import Logging

/// What the store tells views: state updates (the changes, or the whole state) once per burst, the
/// selections views follow (`Selections`), heartbeats, and answers to snapshot requests.
extension StoreCore {
    /// The history stamp of what the store publishes: the history its state follows (0: none yet).
    var historyStamp: UInt64 { history?.rawValue ?? 0 }

    /// Publishes what changed since the last update: the changes alone when the state records them
    /// (`IncrementalState`), else the whole state. `ref` names the version the update applies to.
    /// Nothing is published when no action changed the state: a plain state is compared with the last one
    /// published whole, and actions of other apps do not count. The heartbeat says how far the store got.
    func publishStateIfChanged(now: NodeTime) {
        guard version != lastPublishedVersion, mayHaveChanged else { return }
        mayHaveChanged = false
        var flags: Header.Flags = []
        let payload: [UInt8]
        do {
            if changesSince == lastPublishedVersion, let changes = try runtime.takeChanges() {
                payload = changes
            } else {
                payload = try runtime.encodedState()
                runtime.forgetChanges()
                if let published = snapshots.wholeState, published.version == lastPublishedVersion, published.bytes == payload {
                    // The actions applied left the state as it was published: views already hold it.
                    changesSince = lastPublishedVersion
                    return
                }
                flags = .fullState
                snapshots.wholeState = (version, payload)
            }
        } catch {
            logger.error("state cannot be encoded", metadata: ["store": "\(rules.name)", "error": "\(error)"])
            return
        }
        assert(version > lastPublishedVersion, "an update moves the published version forward")
        changesSince = version
        commands.append(
            .publish(
                Message(
                    topic: rules.name,
                    header: Header(
                        kind: .state, flags: flags, seq: version, ref: lastPublishedVersion, timestamp: now.wallNanoseconds,
                        history: historyStamp), payload: payload)))
        lastPublishedVersion = version
        publishSelectionsIfChanged(now: now)
    }

    func publishHeartbeat(now: NodeTime) {
        let flags: Header.Flags = (replayRequestedAtMs != nil || version < dispatcherHead) ? .catchingUp : []
        // Followers of a selection hear only its topic: each gets a heartbeat of its own.
        for (topic, selection) in selections.sorted {
            assert(selection.version <= max(version, lastPublishedVersion), "a selection changed at a version the store reached")
            commands.append(
                .publish(
                    Message(
                        topic: topic,
                        header: Header(
                            kind: .heartbeat, flags: flags, seq: selection.version, ref: max(version, lastPublishedVersion),
                            timestamp: now.wallNanoseconds, history: historyStamp))))
        }
        commands.append(
            .publish(
                Message(
                    topic: rules.name,
                    header: Header(
                        kind: .heartbeat, flags: flags, seq: lastPublishedVersion, ref: max(version, lastPublishedVersion),
                        timestamp: now.wallNanoseconds, history: historyStamp))))
    }

    /// Answers with the state as last published, so the version matches the update stream.
    func answerSnapshot(_ peer: [UInt8], now: NodeTime) {
        publishStateIfChanged(now: now)
        if snapshots.wholeState?.version != lastPublishedVersion {
            do {
                snapshots.wholeState = (lastPublishedVersion, try runtime.encodedState())
            } catch {
                logger.error("state cannot be encoded", metadata: ["store": "\(rules.name)", "error": "\(error)"])
                return
            }
        }
        assert(snapshots.wholeState?.version == lastPublishedVersion, "a snapshot answers with the state as last published")
        commands.append(
            .reply(
                peer: peer,
                Message(
                    topic: rules.name,
                    header: Header(
                        kind: .snapshot, flags: .fullState, seq: lastPublishedVersion, ref: max(version, lastPublishedVersion),
                        timestamp: now.wallNanoseconds, history: historyStamp),
                    payload: snapshots.wholeState?.bytes ?? [])))
    }

    // MARK: Selections

    /// A view subscribed to (or the last one left) a topic of the state publisher. Selection topics
    /// of this store start or stop being followed; the new follower gets the value at once.
    ///
    /// A subscribe to a topic already followed does nothing (a peer repeating one costs a dictionary
    /// lookup), the state is read as JSON at most once per version however many topics arrive, and
    /// refusals past the cap are counted and told once a minute.
    public func subscriptionChanged(topic: String, subscribed: Bool, now: NodeTime) {
        guard topic.utf8.count <= Selections.maxTopicBytes, topic.hasPrefix(StatePath.topicPrefix + rules.name + "/") else { return }
        guard subscribed else {
            selections.unfollow(topic)
            return
        }
        guard selections[topic] == nil, let path = StatePath.fromTopic(topic, store: rules.name) else { return }
        guard selections.canFollow(topic) else {
            selections.refuse(topic)
            // Its view may have asked for its snapshot already: then the claim is made now.
            if let peer = selections.takeAsker(of: topic), selections.canClaim(topic, by: peer), let state = stateForSelections() {
                let value = path.select(in: state)
                let version = selections.claim(topic, by: peer, path: path, value: value, published: lastPublishedVersion)
                publishSelection(topic, value: value, version: version, now: now)
                return
            }
            if let refused = selections.countRefusal(now: now) {
                logger.warning(
                    "too many selections followed; not following more",
                    metadata: [
                        "store": "\(rules.name)", "followed": "\(selections.count)", "refused": "\(refused)",
                        "latest": "\(topic.prefix(80))",
                    ])
            }
            return
        }
        guard let state = stateForSelections() else { return }
        let value = path.select(in: state)
        let version = selections.follow(topic, path: path, value: value, published: lastPublishedVersion)
        publishSelection(topic, value: value, version: version, now: now)
    }

    /// The current state as JSON, to select parts of; nil (logged) when it cannot be read as JSON. Read
    /// once per version (and history): the state changes only when an action applies.
    private func stateForSelections() -> JSONValue? {
        if let cached = selections.state(version: version, history: historyStamp) { return cached }
        do {
            let state = JSONValue(parsing: try rules.app.stateJSON(fromWire: try runtime.encodedState()))
            selections.keep(state, version: version, history: historyStamp)
            return state
        } catch {
            logger.error("state cannot be read for a selection", metadata: ["store": "\(rules.name)", "error": "\(error)"])
            return nil
        }
    }

    /// After a state update: each selection whose value changed is published, once.
    private func publishSelectionsIfChanged(now: NodeTime) {
        guard !selections.isEmpty, let state = stateForSelections() else { return }
        for (topic, value) in selections.changes(in: state, at: lastPublishedVersion) {
            publishSelection(topic, value: value, version: lastPublishedVersion, now: now)
        }
    }

    private func publishSelection(_ topic: String, value: JSONValue, version: UInt64, now: NodeTime) {
        commands.append(
            .publish(
                Message(
                    topic: topic,
                    header: Header(
                        kind: .state, flags: .fullState, seq: version, ref: max(self.version, lastPublishedVersion),
                        timestamp: now.wallNanoseconds, history: historyStamp),
                    payload: value.jsonBytes)))
    }

    func answerSelection(_ path: StatePath, to peer: [UInt8], now: NodeTime) {
        publishStateIfChanged(now: now)
        let topic = path.topic(store: rules.name)
        // A topic refused at the cap, asked for by a view: followed after all, within the peer's share.
        if selections[topic] == nil, topic.utf8.count <= Selections.maxTopicBytes {
            if selections.canClaim(topic, by: peer), let state = stateForSelections() {
                _ = selections.claim(topic, by: peer, path: path, value: path.select(in: state), published: lastPublishedVersion)
            } else {
                selections.asked(topic, by: peer)
            }
        }
        let followed = selections[topic]
        guard let value = followed?.value ?? stateForSelections().map({ path.select(in: $0) }) else { return }
        commands.append(
            .reply(
                peer: peer,
                Message(
                    topic: topic,
                    header: Header(
                        kind: .snapshot, flags: .fullState, seq: followed?.version ?? lastPublishedVersion,
                        ref: max(version, lastPublishedVersion), timestamp: now.wallNanoseconds, history: historyStamp),
                    payload: value.jsonBytes)))
    }
}
