// The Experiment the "New experiment" editor starts from: small and runnable as it stands. Each trial
// is a batch Job printing `loss=<value>` (Katib's default StdOut collector reads that), from a bowl
// whose bottom is at lr=0.03, momentum=0.7, so a random search visibly improves over a dozen trials.
export function exampleExperiment(namespace: string): string {
  return `apiVersion: kubeflow.org/v1beta1
kind: Experiment
metadata:
  name: random-bowl
  namespace: ${namespace}
spec:
  objective:
    type: minimize
    goal: 0.0001
    objectiveMetricName: loss
  algorithm:
    algorithmName: random
  parallelTrialCount: 3
  maxTrialCount: 12
  maxFailedTrialCount: 3
  parameters:
    - name: lr
      parameterType: double
      feasibleSpace:
        min: "0.001"
        max: "0.1"
        distribution: logUniform
    - name: momentum
      parameterType: double
      feasibleSpace:
        min: "0.5"
        max: "0.95"
  trialTemplate:
    primaryContainerName: training-container
    trialParameters:
      - name: learningRate
        description: Learning rate
        reference: lr
      - name: momentum
        description: Momentum
        reference: momentum
    trialSpec:
      apiVersion: batch/v1
      kind: Job
      spec:
        backoffLimit: 0
        template:
          spec:
            restartPolicy: Never
            containers:
              - name: training-container
                image: python:3.11
                command:
                  - python3
                  - -c
                  - |
                    lr, m = float("\${trialParameters.learningRate}"), float("\${trialParameters.momentum}")
                    print(f"loss={(lr - 0.03) ** 2 * 100 + (m - 0.7) ** 2:.6f}")
`;
}
