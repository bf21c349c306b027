import { LogsView } from './LogsView';

export default function LogsPage() {
  return <LogsView />;
}
