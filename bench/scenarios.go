package bench

// Scenarios returns every scenario of ocbench's own stages, in the order a
// turn runs them. Inputs are generated deterministically, so that the peers
// (module ./peers) measure the very same bytes.
func Scenarios() ([]Scenario, error) {
	var scs []Scenario
	for _, add := range []func() ([]Scenario, error){
		decodeScenarios,
		chainScenarios,
		repairScenarios,
		promptScenarios,
		tokenizeScenarios,
		transcriptScenarios,
		storeScenarios,
		turnScenarios,
	} {
		s, err := add()
		if err != nil {
			return nil, err
		}
		scs = append(scs, s...)
	}
	return scs, checkUnique(scs)
}
