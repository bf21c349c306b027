import { LogsView } from '../../logs/LogsView';

export default function AllLogsPage() {
  return <LogsView admin />;
}
