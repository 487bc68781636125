// Upload a compiled pipeline (the YAML or JSON the kfp compiler writes): a new pipeline, or a new
// version of one. The server's refusal shows here, next to the file that caused it.
import { useState } from 'react';
import { useApi } from '../../api/context';
import { messageOf } from '../../api/errors';
import { useNav } from '../../app/nav';
import { objectHref } from '../../app/router';
import { uploadPipeline, uploadVersion } from './kfp';

export function Upload({ namespace, pipelineId, onDone, onCancel, className }: { namespace?: string; pipelineId?: string; onDone?: () => void; onCancel?: () => void; className?: string }) {
  const { api } = useApi();
  const { navigate } = useNav();
  const [file, setFile] = useState<File>();
  const [name, setName] = useState('');
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const what = pipelineId ? 'version' : 'pipeline';
  async function submit(): Promise<void> {
    if (!file) return setError('choose a compiled pipeline file (.yaml or .json)');
    const n = name.trim() || file.name.replace(/\.(ya?ml|json)$/i, '');
    setBusy(true);
    setError(undefined);
    try {
      const r = pipelineId ? await uploadVersion(api, file, pipelineId, n) : await uploadPipeline(api, file, n, namespace);
      onDone?.();
      if (!pipelineId && r.pipeline_id) navigate(objectHref('pipelines', namespace ?? 'default', r.pipeline_id));
    } catch (e) {
      setError(messageOf(e));
    } finally {
      setBusy(false);
    }
  }
  return (
    <form
      className={`card upload ${className ?? ''}`}
      onKeyDown={(e) => {
        if (e.key === 'Escape') onCancel?.();
      }}
      aria-label={`Upload ${what}`}
      onSubmit={(e) => {
        e.preventDefault();
        void submit();
      }}
    >
      <h3>Upload a {what}</h3>
      <label>
        Compiled pipeline
        <input type="file" autoFocus accept=".yaml,.yml,.json" aria-label="Compiled pipeline file" onChange={(e) => { setFile(e.target.files?.[0]); setError(undefined); }} />
      </label>
      <label>
        {pipelineId ? 'Version name' : 'Pipeline name'}
        <input type="text" value={name} placeholder={file?.name.replace(/\.(ya?ml|json)$/i, '') ?? 'from the file name'} onChange={(e) => setName(e.target.value)} />
      </label>
      <div className="actions">
        <button type="submit" className="primary" disabled={busy}>
          {busy ? 'Uploading…' : 'Upload'}
        </button>
        {onCancel ? (
          <button type="button" onClick={onCancel}>
            Cancel
          </button>
        ) : null}
      </div>
      {error ? (
        <div className="notice bad" role="alert">
          {file && !error.includes(file.name) ? <b>{file.name}: </b> : null}
          {error}
        </div>
      ) : null}
    </form>
  );
}
