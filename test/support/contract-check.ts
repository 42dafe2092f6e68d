import { takeContractViolations } from './openapi-contract';

/** Fails the test during which an answer broke the OpenAPI document (test/support/openapi-contract.ts). */
function expectNoContractViolations(): void {
  const found = takeContractViolations();
  if (found.length > 0) throw new Error(`answers that break the OpenAPI document (/docs-json):\n${found.join('\n')}`);
}

afterEach(expectNoContractViolations);
afterAll(expectNoContractViolations);
