import { Injectable } from '@nestjs/common';

export interface SeedOptions {
  clientCode: string;
}

@Injectable()
export class SeedService {
  async seed(options: SeedOptions): Promise<Record<string, unknown>> {
    return { client_code: options.clientCode };
  }
}
