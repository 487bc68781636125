#!/usr/bin/env bash
# The demo: starts Skiff on its embedded defaults (SQLite, local processes), runs the examples in
# examples/core, and shows what happened and where to look.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/bin:$PATH"
data="${SKIFF_DEMO_DIR:-$PWD/.skiff/demo}"
rm -rf "$data"
mkdir -p "$data"
log="$data/server.log"

step() { printf '\n\033[1;34m==> %s\033[0m\n' "$*"; }
run() { printf '\033[2m$ %s\033[0m\n' "$*"; "$@"; }

step "Starting Skiff (data in $data)"
node bin/skiff.js up --port 0 --data-dir "$data" >"$log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do
  url=$(grep -o 'ready at http://[^ ]*' "$log" | head -n 1 | cut -d' ' -f3 || true)
  [ -n "$url" ] && break
  sleep 0.1
done
[ -n "$url" ] || { cat "$log"; echo "Skiff did not start"; exit 1; }
export SKIFF_SERVER="$url"
cat "$log"
printf '  The dashboard, live while the demo runs: %s/ui/default\n' "$url"

step "The machine, as a Node"
run skiff get nodes -o wide

step "Applying the examples: an Indexed Job, a Job with a podFailurePolicy, a Pod with volumes"
run skiff apply -f examples/core/

step "Waiting for them to finish"
run skiff wait job/pi --for=condition=Complete --timeout=180s
run skiff wait job/flaky --for=condition=Complete --timeout=180s || true
for _ in $(seq 1 300); do
  skiff get pod shared-volume --no-headers 2>/dev/null | grep -qE 'Completed|Error' && break
  sleep 0.2
done

step "What ran"
run skiff get jobs
run skiff get pods

step "Each slice of pi, from the pods' logs; their sum is pi"
total=0
for pod in $(skiff get pods -l batch.kubernetes.io/job-name=pi -o name); do
  line=$(skiff logs "$pod")
  echo "  $pod: $line"
done
skiff get pods -l batch.kubernetes.io/job-name=pi -o name | while read -r pod; do skiff logs "$pod"; done \
  | awk '{s += $3} END {printf "  sum of slices = %.10f (pi = 3.1415926536; 2,000,000 terms of the Leibniz series)\n", s}'

step "The Pod with an init container, an emptyDir and a ConfigMap volume"
run skiff logs pod/shared-volume

step "The flaky Job: exit code 42 is ignored by its podFailurePolicy"
run skiff describe job flaky | sed -n '1,60p'

step "A pipeline compiled by the kfp SDK (examples/pipelines/word_count.py): an artifact, a condition, a OneOf output"
run skiff run examples/pipelines/word_count.yaml -p text="Skiff runs Kubeflow pipelines on one machine" --watch | tee "$data/word-count.out"
wc_run=$(sed -n 's/^run \([^ ]*\) [A-Z]*:.*/\1/p' "$data/word-count.out" | tail -n 1)
run skiff get runs

step "Training a model with a pipeline (examples/serving/train_digits.py), then serving it as KServe does"
out=$(skiff run examples/serving/train_digits.yaml --watch)
echo "$out"
model_uri=$(echo "$out" | sed -n 's/^  output Output: //p' | head -n 1)
train_run=$(echo "$out" | sed -n 's/^run \([^ ]*\) [A-Z]*:.*/\1/p' | tail -n 1)
[ -n "$model_uri" ] || { echo "the pipeline produced no model"; exit 1; }

step "Registering the model in the Model Registry (Kubeflow's REST API), with an alias, and deploying it from there"
mr="$SKIFF_SERVER/api/model_registry/v1alpha3"
post() { curl -sf -H 'content-type: application/json' "$@"; }
id() { node -e 'let s="";process.stdin.on("data",(d)=>s+=d).on("end",()=>console.log(JSON.parse(s).id))'; }
model_id=$(post "$mr/registered_models" -d '{"name": "digits", "owner": "demo", "description": "handwritten digits, 8x8"}' | id)
version_id=$(post "$mr/model_versions" -d "{\"name\": \"v1\", \"author\": \"demo\", \"registeredModelId\": \"$model_id\"}" | id)
post "$mr/model_versions/$version_id/artifacts" -d "{\"artifactType\": \"model-artifact\", \"name\": \"digits\", \"uri\": \"$model_uri\", \"modelFormatName\": \"sklearn\", \"modelFormatVersion\": \"1\"}" >/dev/null
post -X PUT "$mr/registered_models/$model_id/aliases/production" -d "{\"modelVersionId\": \"$version_id\"}" >/dev/null
printf '  registered model %s, version v1 (id %s), alias production -> v1; the artifact knows the run that made it:\n' "$model_id" "$version_id"
curl -s "$mr/model_versions/$version_id/artifacts" | node -e 'let s="";process.stdin.on("data",(d)=>s+=d).on("end",()=>{const a=JSON.parse(s).items[0];console.log(`  modelSourceKind=${a.modelSourceKind} modelSourceName=${a.modelSourceName} modelSourceId=${a.modelSourceId}`)})'
run skiff get registeredmodels,modelversions,modelaliases
sed "s#MODEL_URI#model-registry://digits@production#" examples/serving/sklearn-digits.yaml > "$data/sklearn-digits.yaml"
run skiff apply -f "$data/sklearn-digits.yaml"
run skiff wait inferenceservice/sklearn-digits --for=condition=Ready --timeout=120s
run skiff get inferenceservices
# the 8x8 image of a handwritten zero (the first of scikit-learn's digits)
zero='[0,0,5,13,9,1,0,0,0,0,13,15,10,15,5,0,0,3,15,2,0,11,8,0,0,4,12,0,0,8,8,0,0,5,8,0,0,9,8,0,0,4,11,0,1,12,7,0,0,2,14,5,10,12,0,0,0,0,6,13,10,0,0,0]'
printf '\033[2m$ curl -H "Host: sklearn-digits.default.example.com" $SKIFF_SERVER/v1/models/sklearn-digits:predict -d ...\033[0m\n'
curl -s -H "Host: sklearn-digits.default.example.com" "$SKIFF_SERVER/v1/models/sklearn-digits:predict" -d "{\"instances\": [$zero]}"; echo
printf '\033[2m$ curl $SKIFF_SERVER/serving/default/sklearn-digits/v2/models/sklearn-digits/infer -d ...   (V2, Open Inference Protocol)\033[0m\n'
curl -s "$SKIFF_SERVER/serving/default/sklearn-digits/v2/models/sklearn-digits/infer" -d "{\"inputs\": [{\"name\": \"input-0\", \"shape\": [1, 64], \"datatype\": \"FP64\", \"data\": $zero}]}"; echo
printf '\033[2m$ curl $SKIFF_SERVER/serving/default/sklearn-digits/api/v0.1/predictions -d ...   (Seldon)\033[0m\n'
curl -s "$SKIFF_SERVER/serving/default/sklearn-digits/api/v0.1/predictions" -d "{\"data\": {\"ndarray\": [$zero]}}"; echo
printf '\033[2m$ curl -s $SKIFF_SERVER/metrics | grep skiff_serving_requests_total\033[0m\n'
curl -s "$SKIFF_SERVER/metrics" | grep '^skiff_serving_requests_total' || true
# containers outlive the server (they are adopted when it starts again); a model server would keep
# listening, so the demo takes its InferenceService down
run skiff delete inferenceservice sklearn-digits
for _ in $(seq 1 100); do
  [ -z "$(skiff get pods -l serving.kserve.io/inferenceservice=sklearn-digits --no-headers 2>/dev/null)" ] && break
  sleep 0.2
done

step "NVIDIA's GPU pipeline on CPU (examples/stories/gpu-pipeline): images, a small ResNet, ONNX, Triton, a web app"
run skiff run examples/stories/gpu-pipeline/gpu_pipeline.yaml --watch | tee "$data/gpu-pipeline.out"
gpu_run=$(sed -n 's/^run \([^ ]*\) [A-Z]*:.*/\1/p' "$data/gpu-pipeline.out" | tail -n 1)
run skiff wait inferenceservice/shapes-resnet --for=condition=Ready --timeout=180s
run skiff get inferenceservice shapes-resnet
# the web app's program goes in a ConfigMap, as the example's README does it with kubectl
export KUBECONFIG
KUBECONFIG=$(skiff kubeconfig --path --data-dir "$data")
run .venv-clients/bin/kubectl create configmap shapes-webapp --from-file=examples/stories/gpu-pipeline/webapp.py
run .venv-clients/bin/kubectl apply -f examples/stories/gpu-pipeline/webapp.yaml
app="$SKIFF_SERVER/api/v1/namespaces/default/services/shapes-webapp/proxy"
for _ in $(seq 1 150); do curl -sf "$app/" >/dev/null && break; sleep 0.2; done
# a triangle drawn here, not one of the pipeline's images
.venv/bin/python -c 'from PIL import Image, ImageDraw; i = Image.new("RGB", (80, 80), (30, 30, 50)); ImageDraw.Draw(i).polygon([(40, 14), (16, 62), (64, 62)], fill=(240, 120, 200)); i.save("'"$data"'/triangle.png")'
printf '\033[2m$ curl -F image=@triangle.png -H "Accept: application/json" $SKIFF_SERVER/api/v1/namespaces/default/services/shapes-webapp/proxy/classify\033[0m\n'
curl -s -F image=@"$data/triangle.png" -H 'Accept: application/json' "$app/classify"; echo
printf '\033[2m$ curl -F image=@README.md .../proxy/classify   (not an image)\033[0m\n'
curl -s -w '   (HTTP %{http_code})\n' -F image=@README.md -H 'Accept: application/json' "$app/classify"
printf '  The web app, while the demo runs: %s/\n' "$app"
run skiff delete pod shapes-webapp
run skiff delete inferenceservice shapes-resnet

step "Hyperparameter tuning: a Katib Experiment, 12 trials, 3 at a time"
run skiff apply -f examples/tuning/random-quadratic.yaml
run skiff wait experiment/random-quadratic --for=condition=Succeeded --timeout=180s
run skiff describe experiment random-quadratic --show-events=false | sed -n '7,24p'

step "Where to look"
cat <<TXT
  Data:         $data/skiff.db (SQLite: every object), $data/pods/<uid>/ (volumes, container logs),
                $data/pipeline-root/ (pipeline artifacts), $data/python-envs/ (cached component environments)
  Again:        bin/skiff up --data-dir $data      # the demo's objects are still there
                bin/skiff get pods; bin/skiff logs job/pi; bin/skiff describe job flaky
  The API:      curl http://127.0.0.1:8080/apis/batch/v1/namespaces/default/jobs ; /openapi/v3 describes every route
  Tuning:       bin/skiff get experiments,trials,suggestions; bin/skiff describe experiment random-quadratic
  Registry:     curl http://127.0.0.1:8080/api/model_registry/v1alpha3/registered_models ; bin/skiff get modelversions,modelaliasmoves
  Serving:      bin/skiff get isvc,revisions; curl http://127.0.0.1:8080/serving/default/sklearn-digits/v1/models/sklearn-digits ; /metrics
  kubectl:      export KUBECONFIG=\$(bin/skiff kubeconfig --path --data-dir $data); .venv-clients/bin/kubectl get pods,jobs
                (while skiff up runs; the Python kubernetes client, TrainingClient and KServeClient read it too)
  Your own:     bin/skiff apply -f your-job.yaml

  The dashboard: this server stops with the demo; start it again on the same data and open
                bin/skiff up --data-dir $data      # serves http://127.0.0.1:8080 unless --port says otherwise
                http://127.0.0.1:8080/ui/default/runs/${wc_run:-}  (the word-count run: graph, artifacts, logs)
                http://127.0.0.1:8080/ui/default/runs/${train_run:-}  (the run that trained the digits model)
                http://127.0.0.1:8080/ui/default/registeredmodels/${model_id:-}  (the model in the registry: versions, alias, lineage)
                http://127.0.0.1:8080/ui/default/runs/${gpu_run:-}  (the GPU pipeline's run: images, ResNet, ONNX, deploy)
                http://127.0.0.1:8080/ui/default                         (what ran in the namespace)
                http://127.0.0.1:8080/ui/default/experiments.kubeflow.org/random-quadratic  (the tuning experiment: trials, charts)
                http://127.0.0.1:8080/ui/cluster/cluster-overview        (the node's allocation, Pending Pods, warnings)
TXT
